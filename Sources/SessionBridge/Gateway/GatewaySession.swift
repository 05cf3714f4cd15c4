import Foundation
import TalkLogging

/// The two sockets this device keeps under one identity, as the iOS app does: a `node` socket
/// (caps talk + voiceWake) and an `operator` socket (scopes from its token; `chat.send` needs
/// `operator.write`). The operator socket starts once there is a credential for it.
package actor GatewaySession {
    package nonisolated let node: GatewayConnection
    package nonisolated let operatorConnection: GatewayConnection
    private let credentials: CredentialStore
    private let sleep: @Sendable (Duration) async throws -> Void

    /// - Parameters:
    ///   - openTransport: opens one socket to the Gateway (both roles use the same endpoint and pin).
    ///   - trustedEndpoint: whether a refused shared token may be retried once with the stored device
    ///     token (`DeviceTokenRetry.isTrusted`: loopback, or `wss://` with a pin).
    package init(
        identity: DeviceIdentity, credentials: CredentialStore, displayName: String, version: String,
        openTransport: @escaping @Sendable () async throws -> any GatewayTransport, trustedEndpoint: Bool = false,
        timing: GatewayConnection.Timing = GatewayConnection.Timing(), logger: Logger
    ) {
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
                profile: .node(displayName: displayName, version: version), auth: await credentials.auth(for: .node),
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
        node = GatewayConnection(identity: identity, dependencies: nodeDeps, timing: timing, logger: nodeLogger)
        operatorConnection = GatewayConnection(identity: identity, dependencies: opDeps, timing: timing, logger: opLogger)
    }

    /// Runs both sockets until cancelled (or until both stop on fatal connect errors).
    package func run() async {
        let node = node
        let op = operatorConnection
        let credentials = credentials
        let sleep = sleep
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await node.run() }
            group.addTask {
                // Polling keeps this cancellable without a continuation to clean up; it ends within
                // a quarter second of the node socket receiving the operator token.
                while await !credentials.hasOperatorCredential {
                    do { try await sleep(.milliseconds(250)) } catch { return }
                }
                await op.run()
            }
        }
    }
}
