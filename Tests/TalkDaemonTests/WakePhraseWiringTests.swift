import Foundation
import Synchronization
import TalkBench
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge
@testable import TalkDaemon

/// The daemon's wake-phrase wiring against a Gateway that behaves as upstream does: a node may not call
/// `voicewake.get` (refused by role), and hears the phrases as the `voicewake.changed` pushed right after its
/// `hello-ok`. A device paired as a node only (no operator credential) must still learn them.
@Suite struct WakePhraseWiringTests {
    static let fastTiming: GatewayConnection.Timing = {
        var t = GatewayConnection.Timing()
        t.backoff = Backoff(initial: 0.1, maximum: 1)
        return t
    }()

    @Test func `the phrases pushed to the node right after hello-ok reach the tracker the daemon wires`() async throws {
        // Auth mode none: the node connects without a credential and the operator socket never starts.
        let gw = try await offPool { try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot, arguments: ["--auto-approve"]) }
        defer { gw.stop() }
        _ = try await offPool { try gw.control(#"{"cmd":"voicewake-set","triggers":["hey kitchen","computer"]}"#) }
        let logs = InMemoryLogHandler.Store()
        let logger = Logger(label: "wake-wiring", handler: InMemoryLogHandler(store: logs))
        let identity = try DeviceIdentity(seed: (0..<32).map { _ in UInt8.random(in: 0...255) }, instanceId: UUID().uuidString.lowercased())
        let session = GatewaySession(
            identity: identity, credentials: try CredentialStore(paths: nil), displayName: "wake test", version: "0.1.0-test",
            openTransport: WebSocketTransport.opener(endpoint: try GatewayEndpoint(parsing: gw.startup.url), pin: nil, logger: logger),
            timing: Self.fastTiming, logger: logger)
        let tracker = await RunModes.wakePhrases(session, logger: logger)   // as `run` does, before the sockets connect
        final class Seen: Sendable { let lists = Mutex<[[String]]>([]) }
        let seen = Seen()
        let updates = await tracker.updates()
        let watching = Task { for await list in updates { seen.lists.withLock { $0.append(list) } } }
        let running = Task { await session.run() }
        let following = Task { await tracker.run() }
        defer { following.cancel(); running.cancel(); watching.cancel() }
        let deadline = ContinuousClock.now + .seconds(10)
        while seen.lists.withLock({ $0.last }) != ["hey kitchen", "computer"], ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(seen.lists.withLock { $0 } == [VoiceWakeTracker.defaultTriggers, ["hey kitchen", "computer"]],
                "the defaults until the Gateway's list, then its list: \(seen.lists.withLock { $0 })")
        let frames = try await offPool { try gw.control(#"{"cmd":"frames","last":50}"#) }["frames"]?.arrayValue ?? []
        #expect(!frames.contains { $0["frame"]?["method"] == "voicewake.get" }, "voicewake.get never goes to the node socket: \(frames)")
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        #expect(try await offPool { try gw.control("violations") }["count"] == 0)
    }
}
