import Foundation
import Synchronization
import TalkBench
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge

/// refgw in token mode with auto-approval, and node/operator sockets to it under one device identity:
/// what the Talk pieces run over in these tests.
struct TalkGatewayHarness {
    static let token = "talk-test-token"
    static let operatorScopes = ["operator.read", "operator.talk", "operator.write"]

    let gateway: ReferenceGatewayProcess
    let identity: DeviceIdentity
    let logs = InMemoryLogHandler.Store()
    var logger: Logger { Logger(label: "talk-test", handler: InMemoryLogHandler(store: logs)) }

    static func start(_ extra: [String] = []) async throws -> TalkGatewayHarness {
        let gateway = try await offPool {
            // Ticks every 2 s: a socket counts as dead after two intervals without a frame, and with 500 ms a
            // loaded CI machine (pass 1 runs 8 tests at once) dropped a node between its connect and the
            // operator's node.invoke ("UNAVAILABLE: node not connected", NodeTalkTests, once).
            try ReferenceGatewayProcess(["--token", token, "--auto-approve", "--tick-interval-ms", "2000"] + extra)
        }
        let seed = (0..<32).map { _ in UInt8.random(in: 0...255) }
        return TalkGatewayHarness(gateway: gateway, identity: try DeviceIdentity(seed: seed, instanceId: "talk-test-\(UUID().uuidString.lowercased())"))
    }

    static func nodeProfile(commands: [String]? = nil) -> ClientProfile {
        var profile = ClientProfile.node(displayName: "Kitchen speaker", version: "0.1.0-test")
        if let commands { profile.commands = commands }
        return profile
    }

    static var operatorProfile: ClientProfile {
        .operator(scopes: operatorScopes, displayName: "Kitchen speaker", version: "0.1.0-test")
    }

    /// A socket with this profile, running until the returned task is cancelled; nil if it never connected.
    func connect(_ profile: ClientProfile) async throws -> Connected {
        let connection = try gateway.connection(token: Self.token, profile: profile, identity: identity,
                                                timing: GatewayIntegrationTests.fastTiming, logger: logger)
        let run = Task { await connection.run() }
        let state = await GatewayIntegrationTests.waitFor(connection, GatewayIntegrationTests.connected)
        if state == nil { run.cancel() }
        try #require(state != nil, "the \(profile.role) socket did not connect")
        return Connected(connection: connection, run: run)
    }

    /// A connected socket and the task running it; `stop()` ends it.
    struct Connected {
        let connection: GatewayConnection
        let run: Task<Void, Never>
        func stop() { run.cancel() }
    }

    /// Log lines at `level` or above.
    func logged(atLeast level: Logger.Level) -> [String] {
        logs.events.filter { $0.level >= level }.map { "\($0.message) \($0.metadata.map { "\($0.key)=\($0.value)" }.sorted())" }
    }

    /// Polls `condition` off the pool every 20 ms until it holds (true) or `timeout` passes (false).
    func eventually(timeout: Duration = .seconds(10), _ condition: @escaping @Sendable () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
