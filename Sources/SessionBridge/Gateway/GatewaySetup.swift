import Foundation
import Synchronization
import TalkLogging

/// First contact with a Gateway: trust its certificate (pin), redeem the setup code or shared secret on both
/// sockets, wait out each role's pairing, store the device tokens and the configuration. `openclaw-talk setup`
/// drives it; the prompts and progress lines are hooks so tests can answer them.
///
/// Pairing as upstream does it for a client that is not an official app (upstream-gateway.md §1): a `limited` or
/// `full` code's bootstrap token goes on the node and the operator socket; each role the Gateway does not approve
/// silently gets a pending request (shown with its id and `openclaw devices approve <id>`) that is retried until
/// approved, within the code's life; a node-only code, or one that expired first, leaves the operator role a
/// shared token or password to give once (`Request.operatorSecret` or the `askOperatorSecret` hook).
///
/// Transactional: the new URL, pin and credentials are staged in memory and replace the stored ones together once
/// a role is paired; a setup that fails or is interrupted before that leaves the previous one as it was.
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
        /// The shared token or password for the operator role when the code gives none (`--token-file` with a code).
        package var operatorSecret: CredentialStore.OperatorSecret?
        /// `--timeout`: how long setup keeps trying in all. Without it, an unreachable Gateway is retried for
        /// `transientTimeout` without progress, and pending approvals are waited for while the code lives (its
        /// `expiresAtMs`, else `codeLife` from the start).
        package var timeout: Duration?
        package var transientTimeout: Duration = .seconds(60)
        /// Upstream's bootstrap token lifetime (10 minutes), for a code that does not say when it expires.
        package var codeLife: Duration = .seconds(600)

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
        /// A role waits for the owner's approval of `requestId` (`reason`: why the Gateway asks, when it says);
        /// `waitsOnNode`: the Gateway holds the operator's connect until the node's request (same id) is approved.
        case pairingPending(role: GatewayRole, requestId: String?, reason: PairingReason?, waitsOnNode: Bool)
        /// The Gateway replaced a role's request with a new one (its role or scopes changed): approve the new id.
        case pairingSuperseded(role: GatewayRole, old: String, new: String)
        case rolePaired(role: GatewayRole, scopes: [String])
        /// The operator role needs the shared token or password once (why: a node-only or expired code).
        case operatorCredentialNeeded(reason: String)
        case retrying(reason: String)
    }

    package struct Hooks: Sendable {
        /// Asks "Trust and connect?" for a certificate no one vouches for; nil means nobody can answer.
        package var confirmTrust: @Sendable (_ host: String, _ fingerprint: String) async -> Bool?
        /// Asks whether to replace the pinned certificate `old` by `new` (with `--replace-pin`); nil means
        /// nobody can answer.
        package var confirmReplace: @Sendable (_ host: String, _ old: String, _ new: String) async -> Bool?
        /// Asks for the Gateway's shared token (or password) for the operator role; nil means nobody can answer.
        package var askOperatorSecret: @Sendable () async -> CredentialStore.OperatorSecret?
        package var progress: @Sendable (Progress) -> Void

        package init(
            confirmTrust: @escaping @Sendable (String, String) async -> Bool?,
            confirmReplace: @escaping @Sendable (String, String, String) async -> Bool? = { _, _, _ in nil },
            askOperatorSecret: @escaping @Sendable () async -> CredentialStore.OperatorSecret? = { nil },
            progress: @escaping @Sendable (Progress) -> Void
        ) {
            self.confirmTrust = confirmTrust
            self.confirmReplace = confirmReplace
            self.askOperatorSecret = askOperatorSecret
            self.progress = progress
        }
    }

    /// Where one role ended up.
    package enum RoleOutcome: Sendable, Equatable {
        case paired(scopes: [String])
        /// Still waiting for the owner's approval of this request when setup stopped waiting.
        case pending(requestId: String?)
        /// The operator role has nothing to authenticate with (a node-only or expired code, no secret given).
        case noCredential(reason: String)
        /// The Gateway refused the role (its request rejected, a credential refused).
        case refused(reason: String)

        package var isPaired: Bool { if case .paired = self { true } else { false } }
    }

    /// How setup ended: at least one role paired (else it throws).
    package struct Outcome: Sendable, Equatable {
        package var url: String
        package var serverVersion: String
        package var pinnedFingerprint: String?
        package var node: RoleOutcome
        package var `operator`: RoleOutcome

        /// Both roles paired: the device can chat.
        package var complete: Bool { node.isPaired && `operator`.isPaired }
        package var operatorConnected: Bool { `operator`.isPaired }
        package var operatorScopes: [String] { if case .paired(let scopes) = `operator` { scopes } else { [] } }
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

    /// Runs setup until both roles are paired, a role is refused, or the wait ends; then stores the new
    /// configuration and credentials when at least one role is paired.
    package func run(_ request: Request, hooks: Hooks) async throws -> Outcome {
        let started = ContinuousClock.now
        let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
        try request.code.checkNotExpired(nowMs: nowMs)
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
        let displayName = request.displayName ?? ClientProfile.defaultDisplayName(deviceId: identity.deviceId)
        let session = GatewaySession(
            identity: identity, credentials: credentials, displayName: displayName, version: version,
            openTransport: WebSocketTransport.opener(
                endpoint: endpoint, pin: pin, caFile: caFile, resolver: resolver, refusedUpgradeIsPermanent: true,
                logger: logger),
            trustedEndpoint: DeviceTokenRetry.isTrusted(endpoint, pinnedFingerprint: pin), timing: timing, logger: logger)

        let codeLife = request.code.expiresAtMs.map { Duration.milliseconds(max(0, $0 - nowMs)) } ?? request.codeLife
        let pairing = RolePairing(session: session, request: request, hooks: hooks,
                                  deadline: started + (request.timeout ?? codeLife))
        let paired = try await pairing.run()
        // The commit: credentials first, then the configuration that names them. A crash between the two
        // renames leaves credentials for the new URL beside the old configuration, which loading refuses.
        try await credentials.commit()
        try GatewayConfig(url: "\(endpoint)", tlsFingerprint: pin, displayName: request.displayName).save(paths: paths)
        return Outcome(url: "\(endpoint)", serverVersion: paired.serverVersion, pinnedFingerprint: pin,
                       node: paired.node, operator: paired.operator)
    }
}
