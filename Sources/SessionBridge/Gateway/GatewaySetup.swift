import Foundation
import TalkLogging

/// First contact with a Gateway: trust its certificate (pin), redeem the setup code or shared secret,
/// wait out pairing, store the device tokens and the configuration. `openclaw-talk setup` drives it;
/// the prompt and progress lines are hooks so tests can answer them.
package struct GatewaySetup: Sendable {
    /// What the user gave.
    package struct Request: Sendable {
        package var code: SetupCode
        /// `--trust FP`: the fingerprint the user expects (must match the certificate).
        package var trustFingerprint: String?
        /// `--yes`: trust a first-seen certificate without asking.
        package var assumeYes = false
        package var displayName: String?
        /// How long to wait for the operator socket after the node socket is connected.
        package var operatorWait: Duration = .seconds(10)

        package init(code: SetupCode) { self.code = code }
    }

    /// Things the command shows while setup runs.
    package enum Progress: Sendable, Equatable {
        case connecting(url: String)
        case trusted(fingerprint: String)
        case waitingForApproval(requestId: String?)
        case retrying(reason: String)
    }

    package struct Hooks: Sendable {
        /// Asks "Trust and connect?" for a certificate no one vouches for; nil means nobody can answer.
        package var confirmTrust: @Sendable (_ host: String, _ fingerprint: String) async -> Bool?
        package var progress: @Sendable (Progress) -> Void

        package init(confirmTrust: @escaping @Sendable (String, String) async -> Bool?, progress: @escaping @Sendable (Progress) -> Void) {
            self.confirmTrust = confirmTrust
            self.progress = progress
        }
    }

    /// How setup ended well.
    package struct Outcome: Sendable, Equatable {
        package var url: String
        package var serverVersion: String
        package var pinnedFingerprint: String?
        package var operatorConnected: Bool
        package var operatorScopes: [String]
    }

    package var paths: StoragePaths
    package var version: String
    package var timing = GatewayConnection.Timing()
    package var caFile: String?
    package var logger: Logger

    package init(paths: StoragePaths, version: String, logger: Logger) {
        self.paths = paths
        self.version = version
        self.logger = logger
    }

    /// Runs setup to the first `hello-ok` on the node socket (and the operator socket when it can).
    package func run(_ request: Request, hooks: Hooks) async throws -> Outcome {
        try request.code.checkNotExpired(nowMs: Int64(Date().timeIntervalSince1970 * 1000))
        let endpoint = try request.code.endpoint
        guard request.code.hasCredential else { throw SetupError.noCredential }
        hooks.progress(.connecting(url: "\(endpoint)"))
        // Trust is settled before anything is written: a refused certificate leaves no identity or token behind.
        let pin = try await decidePin(endpoint, request, hooks)
        if let pin { hooks.progress(.trusted(fingerprint: pin)) }
        let identity = try DeviceIdentity.loadOrCreate(paths: paths)

        // Tokens are written down only when they travelled encrypted or stayed on the local network.
        let persist = endpoint.scheme == .wss || endpoint.allowsPlaintext
        let credentials = try CredentialStore(paths: paths, persist: persist)
        try await credentials.beginSetup(
            gatewayURL: "\(endpoint)", bootstrapToken: request.code.bootstrapToken,
            sharedToken: request.code.token, password: request.code.password)
        let displayName = request.displayName ?? ClientProfile.hostName
        let session = GatewaySession(
            identity: identity, credentials: credentials, displayName: displayName, version: version,
            openTransport: WebSocketTransport.opener(endpoint: endpoint, pin: pin, caFile: caFile, logger: logger),
            trustedEndpoint: DeviceTokenRetry.isTrusted(endpoint, pinnedFingerprint: pin), timing: timing, logger: logger)

        let outcome = try await withThrowingTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                await session.run()
                return nil
            }
            group.addTask {
                try await Self.awaitConnected(session, endpoint: endpoint, pin: pin, request: request, hooks: hooks)
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw SetupError.stopped("The connection ended before the Gateway accepted it.")
        }
        try GatewayConfig(url: "\(endpoint)", tlsFingerprint: pin, displayName: request.displayName).save(paths: paths)
        return outcome
    }

    private static func awaitConnected(
        _ session: GatewaySession, endpoint: GatewayEndpoint, pin: String?, request: Request, hooks: Hooks
    ) async throws -> Outcome {
        var version = ""
        for await state in await session.node.stateUpdates() {
            switch state {
            case .connected(let v):
                version = v
            case .waitingForApproval(let id, _):
                hooks.progress(.waitingForApproval(requestId: id))
                continue
            case .reconnecting(_, _, let reason):
                hooks.progress(.retrying(reason: reason))
                continue
            case .disconnected(let reason):
                throw SetupError.stopped(reason)
            case .idle, .connecting:
                continue
            }
            break
        }
        guard !version.isEmpty else { throw CancellationError() }
        let op = session.operatorConnection
        let opConnected = await (try? withDeadline(request.operatorWait, sleep: { try await Task.sleep(for: $0) }, onTimeout: {}) {
            for await s in await op.stateUpdates() {
                if case .connected = s { return true }
                if case .disconnected = s { return false }
            }
            return false
        }) ?? false
        let scopes = await op.hello?.scopes ?? []
        return Outcome(url: "\(endpoint)", serverVersion: version, pinnedFingerprint: pin,
                       operatorConnected: opConnected == true, operatorScopes: scopes)
    }

    /// The certificate pin: from the code, `--trust`, or a first-use prompt when the certificate is not
    /// trusted by the system. Nil for `ws://` and for system-trusted certificates without a pin.
    private func decidePin(_ endpoint: GatewayEndpoint, _ request: Request, _ hooks: Hooks) async throws -> String? {
        guard endpoint.scheme == .wss else { return nil }
        let given = try request.code.tlsFingerprint ?? request.trustFingerprint.map { text throws(SetupError) in
            do { return try CertificateFingerprint.normalize(text) } catch { throw SetupError.badTrustFingerprint(text) }
        }
        if let given {
            // A certificate that does not match is refused now, before the shared token is stored. Other
            // failures (the Gateway not up yet) are left to the connection, which retries them.
            do { try await probe(endpoint, pin: given) } catch let mismatch as TransportError {
                if case .pinMismatch = mismatch { throw mismatch }
            } catch {}
            return given
        }
        do {
            try await probe(endpoint, pin: nil)
            return nil  // the system trust store vouches for it
        } catch TransportError.untrustedCertificate(let host, let fingerprint, _) {
            if request.assumeYes { return fingerprint }
            switch await hooks.confirmTrust(host, fingerprint) {
            case true?: return fingerprint
            case false?: throw SetupError.trustDeclined(fingerprint: fingerprint)
            case nil: throw SetupError.trustNeedsAnswer(fingerprint: fingerprint)
            }
        }
    }

    /// One TLS connection and WebSocket upgrade, closed at once: checks the certificate before setup goes on.
    private func probe(_ endpoint: GatewayEndpoint, pin: String?) async throws {
        var options = WebSocketClient.Options(tlsPinSHA256: pin, caFile: caFile)
        options.closeTimeout = .milliseconds(200)
        let probe = try await WebSocketClient.connect(to: endpoint, options: options, logger: logger)
        await probe.close()
    }
}

/// Why setup could not finish.
package enum SetupError: Error, Equatable, CustomStringConvertible {
    case noCredential
    case badTrustFingerprint(String)
    case trustDeclined(fingerprint: String)
    case trustNeedsAnswer(fingerprint: String)
    case stopped(String)

    package var description: String {
        switch self {
        case .noCredential:
            "The setup code carries no token; pass --token or --password, or make a new code with 'openclaw qr'."
        case .badTrustFingerprint(let t): "--trust '\(t.prefix(100))' is not a SHA-256 fingerprint (64 hex digits)."
        case .trustDeclined(let fp):
            "Not connecting: the certificate \(CertificateFingerprint.display(fp)) was not trusted."
        case .trustNeedsAnswer(let fp):
            "The Gateway's certificate is not trusted by this system and no one can be asked (stdin is not a terminal). "
                + "Verify its SHA-256 fingerprint \(CertificateFingerprint.display(fp)) out of band, then run again with --trust \(fp) (or --yes)."
        case .stopped(let reason): reason
        }
    }
}
