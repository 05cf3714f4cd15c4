import Foundation
import SessionBridge
import Synchronization
import TalkLogging

extension OpenClawTalk {
    /// Joins a Gateway: from a setup code (or a URL with a token/password), trusting its certificate,
    /// waiting for pairing approval, and storing what later connects need.
    struct Setup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "setup",
            abstract: "Pair with an OpenClaw Gateway from a setup code (or a URL and a token).",
            discussion: """
                CODE may be the bare setup code, an oc-pair:// link, the code's JSON, a pasted message that \
                contains it, or '-' to read it from stdin (keeps it out of shell history). Without a code, \
                give --gateway URL with --token-file or --password-file (or $OPENCLAW_TALK_TOKEN). \
                \(SecretOptions.discussion) Nothing is stored until the Gateway has accepted this device: a \
                setup that fails or is stopped leaves the previous one working. A Gateway pinned before must \
                present the same certificate; a changed one is refused (even with --yes) unless --trust names \
                the new SHA-256 or --replace-pin is given. The Gateway URL and certificate pin go to \
                $XDG_CONFIG_HOME/openclaw-talk/, the device identity and tokens to \
                $XDG_STATE_HOME/openclaw-talk/ (owner-only).
                """,
            options: [
                .option("gateway", value: "url", help: "Gateway WebSocket URL (ws:// for local networks only, else wss://)."),
            ] + SecretOptions.options + [
                .option("trust", value: "sha256", help: "Trust the certificate with this SHA-256 (first use, or the new one after a change)."),
                .option("tls-fingerprint", value: "sha256", help: "The same as --trust."),
                .flag("yes", short: "y", help: "Trust a first-seen certificate without asking (scripts); never a changed one."),
                .flag("replace-pin", help: "Allow replacing the pinned certificate (asked on the terminal, or --yes)."),
                .option("timeout", value: "seconds", help: "Give up when the Gateway stays unreachable this long (default 60)."),
                .option("display-name", value: "name", help: "Name shown for this device (default: the host name)."),
            ],
            arguments: [ArgumentSpec(name: "code", help: "The setup code, or '-' to read it from stdin.", optional: true)]
        )

        var code: SetupCode
        var trust: String?
        var yes: Bool
        var replacePin: Bool
        var timeout: Int
        var displayName: String?

        init(_ parsed: ParsedArguments) throws {
            let given = parsed.argument("code")
            let gateway = parsed.option("gateway")
            switch (given, gateway) {
            case (nil, nil): throw ValidationError("Give a setup code, or --gateway URL with --token-file or --password-file.")
            case (_?, _?): throw ValidationError("Give either a setup code or --gateway, not both.")
            default: break
            }
            let text = given == "-" ? (readLine(strippingNewline: true) ?? "") : (given ?? gateway ?? "")
            do { code = try SetupCode.parse(text) } catch { throw ValidationError(error.description) }
            if gateway != nil, !(code.url.hasPrefix("ws://") || code.url.hasPrefix("wss://")) {
                throw ValidationError("--gateway takes a ws:// or wss:// URL.")
            }
            // The environment fills in only what a code without its own credential lacks.
            let secrets = try SecretOptions.read(parsed, includeEnvironment: !code.hasCredential, standardInputTaken: given == "-")
            if let t = secrets.token { code.token = t }
            if let p = secrets.password { code.password = p }
            if !code.hasCredential {
                throw ValidationError("No credential: the code carries no token, so pass --token-file, --password-file or $\(SecretOptions.tokenVariable).")
            }
            let trusts = [parsed.option("trust"), parsed.option("tls-fingerprint")].compactMap { $0 }
            for text in trusts where (try? CertificateFingerprint.normalize(text)) == nil {
                throw ValidationError("--trust '\(text.prefix(100))' is not a SHA-256 fingerprint (64 hex digits).")
            }
            if Set(trusts.compactMap { try? CertificateFingerprint.normalize($0) }).count > 1 {
                throw ValidationError("--trust and --tls-fingerprint name different certificates.")
            }
            trust = trusts.first
            yes = parsed.flag("yes")
            replacePin = parsed.flag("replace-pin")
            timeout = try parsed.intOption("timeout", range: 1...86_400) ?? 60
            displayName = parsed.option("display-name")
        }

        func run() async throws {
            let version = OpenClawTalk.version.split(separator: " ").last.map(String.init) ?? "0.1.0"
            var logger = Logger(label: "openclaw-talk.setup")
            logger[metadataKey: "command"] = "setup"
            let setup = GatewaySetup(paths: .standard(), version: version, logger: logger)
            var request = GatewaySetup.Request(code: code)
            request.trustFingerprint = trust
            request.assumeYes = yes
            request.replacePin = replacePin
            request.timeout = .seconds(timeout)
            request.displayName = displayName
            let shown = Mutex<Set<String>>([])
            let hooks = GatewaySetup.Hooks(confirmTrust: Self.askTrust, confirmReplace: Self.askReplace) { progress in
                let line = Self.line(for: progress)
                // Each message once, however often the connection retries.
                guard shown.withLock({ $0.insert(line).inserted }) else { return }
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
            let outcome = try await setup.run(request, hooks: hooks)
            print("Connected to \(outcome.url) (Gateway \(GatewayText.neutralized(outcome.serverVersion, limit: 64)))")
            if outcome.operatorConnected {
                print("Operator access: \(outcome.operatorScopes.map { GatewayText.neutralized($0, limit: 64) }.joined(separator: ", "))")
            } else {
                FileHandle.standardError.write(Data("The operator connection (needed to send chat) is not up yet; it will keep trying when the daemon runs.\n".utf8))
            }
        }

        /// What the terminal shows for a step. Everything the Gateway chose is neutralised first.
        static func line(for progress: GatewaySetup.Progress) -> String {
            switch progress {
            case .connecting(let url): return "Connecting to \(url) ..."
            case .plaintextOnNetwork(let host):
                return "Warning: ws:// to \(host) is not encrypted: the token and everything said cross the network "
                    + "in the clear, readable by anyone on it. Use wss:// when the Gateway offers it."
            case .trusted(let fp): return "Certificate pinned: SHA-256 \(CertificateFingerprint.display(fp))"
            case .pinReplaced(let old, let new):
                return "Replacing the pinned certificate SHA-256 \(CertificateFingerprint.display(old))\n"
                    + "  with SHA-256 \(CertificateFingerprint.display(new)), as asked."
            case .waitingForApproval(let id?) where GatewayText.isRequestId(id):
                return "Waiting for approval of this device (request \(id)).\n"
                    + "  On the Gateway host run: openclaw devices approve \(id)\n  Retrying until it is approved; Ctrl-C to stop."
            case .waitingForApproval:
                return "Waiting for approval of this device.\n"
                    + "  On the Gateway host run 'openclaw devices list' and approve its request.\n  Retrying until it is approved; Ctrl-C to stop."
            case .retrying(let reason): return "Not connected yet: \(GatewayText.neutralized(reason, limit: 400)) Retrying..."
            }
        }

        /// "Trust and connect?" on the terminal; nil when stdin is not a terminal (no one to ask).
        @Sendable static func askTrust(host: String, fingerprint: String) async -> Bool? {
            ask("""
                The Gateway at \(host) presents a certificate this system does not trust (first-time TLS connection).
                Verify this SHA-256 fingerprint out of band before trusting it:
                  \(CertificateFingerprint.display(fingerprint))
                Trust and connect? [y/N] 
                """)
        }

        /// "Replace the pin?" on the terminal (`--replace-pin`); nil when no one can answer.
        @Sendable static func askReplace(host: String, old: String, new: String) async -> Bool? {
            ask("""
                The Gateway at \(host) presents a different certificate from the one pinned at setup.
                  pinned:    \(CertificateFingerprint.display(old))
                  presented: \(CertificateFingerprint.display(new))
                Replace the pin only if you know the certificate changed and verified the new fingerprint out of band.
                Replace the pin and connect? [y/N] 
                """)
        }

        private static func ask(_ prompt: String) -> Bool? {
            guard isatty(STDIN_FILENO) == 1 else { return nil }
            FileHandle.standardError.write(Data(prompt.utf8))
            let answer = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            return answer == "y" || answer == "yes"
        }
    }
}
