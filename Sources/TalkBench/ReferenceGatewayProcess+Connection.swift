import Foundation
import SessionBridge
import TalkLogging

extension ReferenceGatewayProcess {
    /// A socket to this Gateway (started with `--token token --auto-approve`) under a fresh throwaway device
    /// identity, for tests and benchmarks that need a connected socket without a setup code. Not yet running.
    package func connection(
        token: String, profile: ClientProfile, identity: DeviceIdentity? = nil,
        timing: GatewayConnection.Timing = GatewayConnection.Timing(), logger: Logger
    ) throws -> GatewayConnection {
        let open = WebSocketTransport.opener(endpoint: try GatewayEndpoint(parsing: startup.url), pin: startup.tlsFingerprint, logger: logger)
        let deps = GatewayConnection.Dependencies(openTransport: open) {
            GatewayConnection.ConnectMaterial(profile: profile, auth: ConnectAuth(token: token))
        }
        let identity = try identity ?? DeviceIdentity(
            seed: (0..<32).map { _ in UInt8.random(in: 0...255) }, instanceId: UUID().uuidString.lowercased())
        return GatewayConnection(identity: identity, dependencies: deps, timing: timing, logger: logger)
    }
}
