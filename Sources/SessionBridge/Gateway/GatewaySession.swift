import Foundation
import TalkLogging

/// The two sockets this device keeps under one identity, as the iOS app does: a `node` socket
/// (caps talk + voiceWake) and an `operator` socket (scopes from its token; `chat.send` needs
/// `operator.write`). The operator socket starts once there is a credential for it: a setup code's bootstrap
/// token counts (upstream accepts it for each role of its profile), and a refusal of it for a role is remembered,
/// so `status` can say that role has no credential.
package actor GatewaySession {
    package nonisolated let node: GatewayConnection
    package nonisolated let operatorConnection: GatewayConnection
    package nonisolated let credentials: CredentialStore
    /// The name both sockets give (`client.displayName`), also the presence beacon's.
    package nonisolated let displayName: String
    /// What the node socket announces in `connect` (its caps and declared commands).
    package nonisolated let nodeProfile: ClientProfile
    private let sleep: @Sendable (Duration) async throws -> Void
    private let identity: DeviceIdentity
    private let operatorDependencies: GatewayConnection.Dependencies
    private let timing: GatewayConnection.Timing
    private let operatorLogger: Logger

    /// - Parameters:
    ///   - openTransport: opens one socket to the Gateway (both roles use the same endpoint and pin).
    ///   - trustedEndpoint: whether a refused shared token may be retried once with the stored device
    ///     token (`DeviceTokenRetry.isTrusted`: loopback, or `wss://` with a pin).
    ///   - pushToTalk: whether the node declares `talk.ptt.*` (not in realtime mode: `ClientProfile.node`).
    package init(
        identity: DeviceIdentity, credentials: CredentialStore, displayName: String, version: String,
        openTransport: @escaping @Sendable () async throws -> any GatewayTransport, trustedEndpoint: Bool = false,
        pushToTalk: Bool = true, timing: GatewayConnection.Timing = GatewayConnection.Timing(), logger: Logger
    ) {
        let nodeProfile = ClientProfile.node(displayName: displayName, version: version, pushToTalk: pushToTalk)
        self.nodeProfile = nodeProfile
        self.credentials = credentials
        let sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
        self.sleep = sleep
        let record: @Sendable (HelloOk, GatewayConnection.ConnectMaterial) async -> Void = { hello, _ in
            do { try await credentials.record(hello) } catch {
                logger.warning("could not store the device tokens", metadata: ["error": "\(error)"])
            }
        }
        var nodeDeps = GatewayConnection.Dependencies(openTransport: openTransport) {
            GatewayConnection.ConnectMaterial(
                profile: nodeProfile, auth: await credentials.auth(for: .node),
                deviceTokenRetry: await credentials.deviceTokenRetry(for: .node, trustedEndpoint: trustedEndpoint))
        }
        nodeDeps.helloReceived = record
        var opDeps = GatewayConnection.Dependencies(openTransport: openTransport) {
            GatewayConnection.ConnectMaterial(
                profile: .operator(scopes: await credentials.operatorScopes(), displayName: displayName, version: version),
                auth: await credentials.auth(for: .operator),
                deviceTokenRetry: await credentials.deviceTokenRetry(for: .operator, trustedEndpoint: trustedEndpoint))
        }
        opDeps.helloReceived = record
        var nodeLogger = logger
        nodeLogger[metadataKey: "gateway.role"] = "node"
        var opLogger = logger
        opLogger[metadataKey: "gateway.role"] = "operator"
        self.identity = identity
        self.displayName = displayName
        self.timing = timing
        operatorDependencies = opDeps
        operatorLogger = opLogger
        node = GatewayConnection(identity: identity, dependencies: nodeDeps, timing: timing, logger: nodeLogger)
        operatorConnection = GatewayConnection(identity: identity, dependencies: opDeps, timing: timing, logger: opLogger)
    }

    /// Another operator socket like `operatorConnection` (same identity, endpoint and credentials): setup pairs the
    /// operator role with it after the first one stopped, when a shared secret was given for a node-only code.
    package nonisolated func newOperatorConnection() -> GatewayConnection {
        GatewayConnection(identity: identity, dependencies: operatorDependencies, timing: timing, logger: operatorLogger)
    }

    /// Runs one socket; a bootstrap token it was refused is remembered for its role.
    package static func run(_ connection: GatewayConnection, role: GatewayRole, credentials: CredentialStore) async {
        await connection.run()
        guard !Task.isCancelled, await connection.lastConnectError?.code == "AUTH_BOOTSTRAP_TOKEN_INVALID" else { return }
        try? await credentials.bootstrapRefused(for: role)
    }

    /// Runs both sockets until cancelled (or until both stop on fatal connect errors).
    package func run() async {
        let node = node
        let op = operatorConnection
        let credentials = credentials
        let sleep = sleep
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await Self.run(node, role: .node, credentials: credentials) }
            group.addTask {
                // Polling keeps this cancellable without a continuation to clean up; it ends within
                // a quarter second of a credential arriving (a token handed off in the node's hello-ok).
                while await !credentials.hasOperatorCredential {
                    do { try await sleep(.milliseconds(250)) } catch { return }
                }
                await Self.run(op, role: .operator, credentials: credentials)
            }
        }
    }
}
