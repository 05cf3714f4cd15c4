import Foundation
import Synchronization
import TalkLogging

/// First contact with a Gateway: trust its certificate (pin), redeem the setup code or shared secret,
/// wait out pairing, store the device tokens and the configuration. `openclaw-talk setup` drives it;
/// the prompt and progress lines are hooks so tests can answer them.
///
/// Transactional: the new URL, pin and credentials are staged in memory and replace the stored ones
/// together only after `hello-ok`; a setup that fails or is interrupted leaves the previous one as it was.
package struct GatewaySetup: Sendable {
    /// What the user gave.
    package struct Request: Sendable {
        package var code: SetupCode
        /// `--trust FP`: the fingerprint the user expects (must match the certificate).
        package var trustFingerprint: String?
        /// `--yes`: trust a first-seen certificate without asking (never a changed one).
        package var assumeYes = false
        /// `--replace-pin`: a certificate other than the pinned one may be trusted (asked, or `--yes`).
        package var replacePin = false
        package var displayName: String?
        /// How long to wait for the operator socket after the node socket is connected.
        package var operatorWait: Duration = .seconds(10)
        /// How long transient failures (Gateway down, timeouts, UNAVAILABLE) are retried before giving
        /// up; waiting for pairing approval does not count.
        package var timeout: Duration = .seconds(60)

        package init(code: SetupCode) { self.code = code }
    }

    /// Things the command shows while setup runs.
    package enum Progress: Sendable, Equatable {
        case connecting(url: String)
        /// `ws://` to a host that is not this machine: the token crosses the network unencrypted.
        case plaintextOnNetwork(host: String)
        case trusted(fingerprint: String)
        /// The pin changes, as the user asked (`--trust NEW` or `--replace-pin`).
        case pinReplaced(old: String, new: String)
        case waitingForApproval(requestId: String?)
        case retrying(reason: String)
    }

    package struct Hooks: Sendable {
        /// Asks "Trust and connect?" for a certificate no one vouches for; nil means nobody can answer.
        package var confirmTrust: @Sendable (_ host: String, _ fingerprint: String) async -> Bool?
        /// Asks whether to replace the pinned certificate `old` by `new` (with `--replace-pin`); nil means
        /// nobody can answer.
        package var confirmReplace: @Sendable (_ host: String, _ old: String, _ new: String) async -> Bool?
        package var progress: @Sendable (Progress) -> Void

        package init(
            confirmTrust: @escaping @Sendable (String, String) async -> Bool?,
            confirmReplace: @escaping @Sendable (String, String, String) async -> Bool? = { _, _, _ in nil },
            progress: @escaping @Sendable (Progress) -> Void
        ) {
            self.confirmTrust = confirmTrust
            self.confirmReplace = confirmReplace
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
    /// How host names resolve (tests swap it).
    package var resolver: HostResolver = .system
    package var logger: Logger

    package init(paths: StoragePaths, version: String, logger: Logger) {
        self.paths = paths
        self.version = version
        self.logger = logger
    }

    /// Runs setup to the first `hello-ok` on the node socket (and the operator socket when it can), then
    /// stores the new configuration and credentials.
    package func run(_ request: Request, hooks: Hooks) async throws -> Outcome {
        try request.code.checkNotExpired(nowMs: Int64(Date().timeIntervalSince1970 * 1000))
        let endpoint = try request.code.endpoint
        guard request.code.hasCredential else { throw SetupError.noCredential }
        hooks.progress(.connecting(url: "\(endpoint)"))
        if endpoint.scheme == .ws, !endpoint.isLoopback { hooks.progress(.plaintextOnNetwork(host: endpoint.host)) }
        let previous = try GatewayConfig.load(paths: paths)
        // Trust is settled before anything is written: a refused certificate leaves no identity or token behind.
        let pin = try await decidePin(endpoint, request, previous: previous, hooks)
        if let pin { hooks.progress(.trusted(fingerprint: pin)) }
        let identity = try DeviceIdentity.loadOrCreate(paths: paths)

        // Tokens are written down only when they travelled encrypted or stayed on the local network.
        let persist = endpoint.scheme == .wss || endpoint.allowsPlaintext
        let credentials = try CredentialStore.staged(
            paths: paths, gatewayURL: "\(endpoint)", bootstrapToken: request.code.bootstrapToken,
            sharedToken: request.code.token, password: request.code.password, persist: persist)
        let displayName = request.displayName ?? ClientProfile.hostName
        let session = GatewaySession(
            identity: identity, credentials: credentials, displayName: displayName, version: version,
            openTransport: WebSocketTransport.opener(
                endpoint: endpoint, pin: pin, caFile: caFile, resolver: resolver, refusedUpgradeIsPermanent: true,
                logger: logger),
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
        // The commit: credentials first, then the configuration that names them. A crash between the two
        // renames leaves credentials for the new URL beside the old configuration, which loading refuses.
        try await credentials.commit()
        try GatewayConfig(url: "\(endpoint)", tlsFingerprint: pin, displayName: request.displayName).save(paths: paths)
        return outcome
    }

    private static func awaitConnected(
        _ session: GatewaySession, endpoint: GatewayEndpoint, pin: String?, request: Request, hooks: Hooks
    ) async throws -> Outcome {
        let version = try await withThrowingTaskGroup(of: String?.self) { group in
            // Transient failures are retried until `timeout` has passed without progress; waiting for
            // approval stops the clock, since a person is then expected to act.
            let retrying = RetryClock()
            group.addTask {
                for await state in await session.node.stateUpdates() {
                    switch state {
                    case .connected(let v):
                        return v
                    case .waitingForApproval(let id, _):
                        retrying.state.withLock { $0.since = nil }
                        hooks.progress(.waitingForApproval(requestId: id))
                    case .reconnecting(_, _, let reason):
                        retrying.state.withLock { r in
                            if r.since == nil { r.since = .now }
                            r.reason = reason
                        }
                        hooks.progress(.retrying(reason: reason))
                    case .disconnected(let reason):
                        throw SetupError.stopped(reason)
                    case .idle, .connecting:
                        continue
                    }
                }
                throw CancellationError()
            }
            group.addTask {
                while true {
                    try await Task.sleep(for: .milliseconds(200))
                    let (since, reason) = retrying.state.withLock { ($0.since, $0.reason) }
                    if let since, ContinuousClock.now - since >= request.timeout {
                        throw SetupError.gaveUp(reason: reason, seconds: Int(request.timeout.components.seconds))
                    }
                }
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let version, !version.isEmpty else { throw CancellationError() }
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
}

/// Since when setup has been failing without progress, and why (shared by its two watching tasks).
private final class RetryClock: Sendable {
    let state = Mutex<(since: ContinuousClock.Instant?, reason: String)>((ContinuousClock.now, ""))
}
