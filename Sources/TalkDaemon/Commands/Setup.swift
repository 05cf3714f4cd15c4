import Foundation
import SessionBridge
import Synchronization
import TalkLogging

extension OpenClawTalk {
    /// Joins a Gateway: from a setup code (or a URL with a token/password), trusting its certificate, pairing the
    /// node and the operator role (each request shown with its approve command, waited for while the code lives),
    /// and storing what later connects need. Succeeds only when both roles are paired.
    struct Setup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "setup",
            abstract: "Pair with an OpenClaw Gateway from a setup code (or a URL and a token).",
            discussion: """
                CODE may be the bare setup code, an oc-pair:// link, the code's JSON, a pasted message that \
                contains it, or '-' to read it from stdin (keeps it out of shell history). Without a code, \
                give --gateway URL with --token-file or --password-file (or $OPENCLAW_TALK_TOKEN). \
                \(SecretOptions.discussion) The node and the operator role (which sends chat) are paired with \
                the code: each request the Gateway does not approve by itself is shown with 'openclaw devices \
                approve <id>' and waited for while the code lives (or --timeout). A node-only code, or one that \
                expired first, leaves the operator role the Gateway's shared token or password to give once \
                (--token-file, --password-file, $\(SecretOptions.tokenVariable), or typed when asked); only its \
                device token is kept. Setup succeeds (exit 0) only when both roles are paired, and says which one is \
                missing otherwise. Nothing is stored until the Gateway has accepted a role: a setup that fails or is \
                stopped before that leaves the previous one working. A Gateway pinned before must \
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
                .option("timeout", value: "seconds", help: "Give up after this long (default: 60 s of an unreachable Gateway; approvals are waited for while the code lives)."),
                .option("display-name", value: "name", help: "Name shown for this device (default: the host name and the start of the device id)."),
            ],
            arguments: [ArgumentSpec(name: "code", help: "The setup code, or '-' to read it from stdin.", optional: true)]
        )

        var code: SetupCode
        var trust: String?
        var yes: Bool
        var replacePin: Bool
        var timeout: Int?
        var displayName: String?
        /// The shared token or password given beside a setup code: the operator role's credential when the code
        /// gives it none.
        var operatorSecret: CredentialStore.OperatorSecret?

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
            let secrets = try SecretOptions.read(parsed, includeEnvironment: true, standardInputTaken: given == "-")
            if code.hasCredential {
                // Beside a code, a shared secret is for the operator role, should the code not pair it.
                if secrets.token != nil || secrets.password != nil {
                    operatorSecret = CredentialStore.OperatorSecret(token: secrets.token, password: secrets.password)
                }
            } else {
                code.token = secrets.token
                code.password = secrets.password
            }
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
            timeout = try parsed.intOption("timeout", range: 1...86_400)
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
            request.timeout = timeout.map { .seconds($0) }
            request.displayName = displayName
            request.operatorSecret = operatorSecret
            let shown = Mutex<Set<String>>([])
            let hooks = GatewaySetup.Hooks(confirmTrust: Self.askTrust, confirmReplace: Self.askReplace,
                                           askOperatorSecret: Self.askOperatorSecret) { progress in
                let line = Self.line(for: progress)
                // Each message once, however often the connection retries.
                guard shown.withLock({ $0.insert(line).inserted }) else { return }
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
            let outcome = try await setup.run(request, hooks: hooks)
            print("Connected to \(outcome.url) (Gateway \(GatewayText.neutralized(outcome.serverVersion, limit: 64)))")
            for line in Self.summary(outcome) { print(line) }
            if !outcome.complete { throw ExitCode.failure }
        }

        /// Each role's state at the end, and what to do about one that is not paired.
        static func summary(_ outcome: GatewaySetup.Outcome) -> [String] {
            func describe(_ role: GatewayRole, _ result: GatewaySetup.RoleOutcome) -> String {
                switch result {
                case .paired(let scopes) where role == .operator:
                    return "Operator role: paired (\(scopes.map { GatewayText.neutralized($0, limit: 64) }.joined(separator: ", ")))"
                case .paired: return "Node role: paired"
                case .pending(let id):
                    return PairingStatus.pending(role, requestId: id)
                        + ". The daemon ('openclaw-talk run') finishes pairing once it is approved, while the setup code lives."
                case .noCredential(let reason): return PairingStatus.noOperatorCredential + " (\(GatewayText.neutralized(reason)))."
                case .refused(let reason): return "\(role == .node ? "Node" : "Operator") role refused: \(GatewayText.neutralized(reason, limit: 400))"
                }
            }
            var lines = [describe(.node, outcome.node), describe(.operator, outcome.operator)]
            if !outcome.complete {
                lines.append(outcome.operatorConnected
                    ? "Setup is not complete: the node role is missing (push-to-talk and presence need it)."
                    : "Setup is not complete: without the operator role this device cannot send what you say to the agent.")
            }
            return lines
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
            case .pairingPending(.operator, let id?, _, true) where GatewayText.isRequestId(id):
                return "The operator role waits until the node's request \(id) is approved (the Gateway pairs the node first)."
            case .pairingPending(let role, let id?, let reason, _) where GatewayText.isRequestId(id):
                return "Pairing request for the \(role.rawValue) role\(reason == .roleUpgrade ? " (a role upgrade)" : ""): \(id)\n"
                    + "  On the Gateway host run: openclaw devices approve \(id)\n"
                    + "  Retrying until it is approved, while the setup code lives; Ctrl-C to stop."
            case .pairingPending(let role, _, _, _):
                return "Waiting for approval of the \(role.rawValue) role.\n"
                    + "  On the Gateway host run 'openclaw devices list' and approve this device's request.\n"
                    + "  Retrying until it is approved, while the setup code lives; Ctrl-C to stop."
            case .pairingSuperseded(let role, let old, let new):
                let ids = [old, new].map { GatewayText.isRequestId($0) ? $0 : "(an unprintable id)" }
                return "The Gateway replaced the \(role.rawValue) role's request \(ids[0]) by \(ids[1]); approve \(ids[1])."
            case .rolePaired(.node, _): return "The node role is paired."
            case .rolePaired(_, let scopes):
                return "The operator role is paired (\(scopes.map { GatewayText.neutralized($0, limit: 64) }.joined(separator: ", ")))."
            case .operatorCredentialNeeded(let reason):
                return "The operator role (it sends what you say to the agent) has no credential: \(GatewayText.neutralized(reason)).\n"
                    + "  It needs the Gateway's shared token or password once: --token-file FILE, --password-file FILE, "
                    + "$\(SecretOptions.tokenVariable), or typed when asked. Only the operator's device token is kept."
            case .retrying(let reason): return "Not connected yet: \(GatewayText.neutralized(reason, limit: 400)) Retrying..."
            }
        }

        /// The Gateway's shared token typed on the terminal, not echoed; nil when stdin is not a terminal.
        @Sendable static func askOperatorSecret() async -> CredentialStore.OperatorSecret? {
            guard isatty(STDIN_FILENO) == 1 else { return nil }
            FileHandle.standardError.write(Data("Gateway shared token for the operator role (not shown; for a password use --password-file): ".utf8))
            var saved = termios()
            let hidden = tcgetattr(STDIN_FILENO, &saved) == 0
            if hidden {
                var quiet = saved
                quiet.c_lflag &= ~tcflag_t(ECHO)
                tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
            }
            let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces) ?? ""
            if hidden { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
            FileHandle.standardError.write(Data("\n".utf8))
            return line.isEmpty || line.contains(where: \.isNewline) ? nil : CredentialStore.OperatorSecret(token: line, password: nil)
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
