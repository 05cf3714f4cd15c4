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
                give --gateway URL with --token or --password. The Gateway URL and certificate pin go to \
                $XDG_CONFIG_HOME/openclaw-talk/, the device identity and tokens to \
                $XDG_STATE_HOME/openclaw-talk/ (owner-only).
                """,
            options: [
                .option("gateway", value: "url", help: "Gateway WebSocket URL (ws:// for local networks only, else wss://)."),
                .option("token", value: "token", help: "Gateway shared token (instead of, or with, a setup code)."),
                .option("password", value: "password", help: "Gateway shared password."),
                .option("tls-fingerprint", value: "sha256", help: "Pin the Gateway certificate to this SHA-256."),
                .option("trust", value: "sha256", help: "Trust a first-seen certificate with this SHA-256 without asking."),
                .flag("yes", short: "y", help: "Trust a first-seen certificate without asking (scripts)."),
                .option("display-name", value: "name", help: "Name shown for this device (default: the host name)."),
            ],
            arguments: [ArgumentSpec(name: "code", help: "The setup code, or '-' to read it from stdin.", optional: true)]
        )

        var code: SetupCode
        var trust: String?
        var yes: Bool
        var displayName: String?

        init(_ parsed: ParsedArguments) throws {
            let given = parsed.argument("code")
            let gateway = parsed.option("gateway")
            switch (given, gateway) {
            case (nil, nil): throw ValidationError("Give a setup code, or --gateway URL with --token or --password.")
            case (_?, _?): throw ValidationError("Give either a setup code or --gateway, not both.")
            default: break
            }
            let text = given == "-" ? (readLine(strippingNewline: true) ?? "") : (given ?? gateway ?? "")
            do { code = try SetupCode.parse(text) } catch { throw ValidationError(error.description) }
            if gateway != nil, !(code.url.hasPrefix("ws://") || code.url.hasPrefix("wss://")) {
                throw ValidationError("--gateway takes a ws:// or wss:// URL.")
            }
            if let t = parsed.option("token") { code.token = t }
            if let p = parsed.option("password") { code.password = p }
            if let fp = parsed.option("tls-fingerprint") {
                do { code.tlsFingerprint = try CertificateFingerprint.normalize(fp) } catch {
                    throw ValidationError("--tls-fingerprint '\(fp.prefix(100))' is not a SHA-256 fingerprint (64 hex digits).")
                }
            }
            if !code.hasCredential {
                throw ValidationError("No credential: the code carries no token, so pass --token or --password.")
            }
            trust = parsed.option("trust")
            yes = parsed.flag("yes")
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
            request.displayName = displayName
            let shown = Mutex<Set<String>>([])
            let hooks = GatewaySetup.Hooks(confirmTrust: Self.askTrust) { progress in
                let line: String
                switch progress {
                case .connecting(let url): line = "Connecting to \(url) ..."
                case .trusted(let fp): line = "Certificate pinned: SHA-256 \(CertificateFingerprint.display(fp))"
                case .waitingForApproval(let id):
                    let shownId = id ?? "<request id>"
                    line = "Waiting for approval of this device (request \(shownId)).\n"
                        + "  On the Gateway host run: openclaw devices approve \(shownId)\n  Retrying until it is approved; Ctrl-C to stop."
                case .retrying(let reason): line = "Not connected yet: \(reason) Retrying..."
                }
                // Each message once, however often the connection retries.
                guard shown.withLock({ $0.insert(line).inserted }) else { return }
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
            let outcome = try await setup.run(request, hooks: hooks)
            print("Connected to \(outcome.url) (Gateway \(outcome.serverVersion))")
            if outcome.operatorConnected {
                print("Operator access: \(outcome.operatorScopes.joined(separator: ", "))")
            } else {
                FileHandle.standardError.write(Data("The operator connection (needed to send chat) is not up yet; it will keep trying when the daemon runs.\n".utf8))
            }
        }

        /// "Trust and connect?" on the terminal; nil when stdin is not a terminal (no one to ask).
        @Sendable static func askTrust(host: String, fingerprint: String) async -> Bool? {
            guard isatty(STDIN_FILENO) == 1 else { return nil }
            let prompt = """
                The Gateway at \(host) presents a certificate this system does not trust (first-time TLS connection).
                Verify this SHA-256 fingerprint out of band before trusting it:
                  \(CertificateFingerprint.display(fingerprint))
                Trust and connect? [y/N] 
                """
            FileHandle.standardError.write(Data(prompt.utf8))
            let answer = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            return answer == "y" || answer == "yes"
        }
    }
}
