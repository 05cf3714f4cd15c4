import Foundation
import Synchronization
import TalkLogging
import TalkTestSupport
@testable import TalkService

/// A private runtime folder under /tmp (short: a socket path must fit in 108 bytes), removed afterwards.
final class TemporaryFolder: Sendable {
    let path: String
    init() throws {
        var template = Array("/tmp/oct-svc-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        path = String(cString: made)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    var paths: RuntimePaths {
        RuntimePaths(runtimeDirectory: path + "/run/openclaw-talk", stateDirectory: path + "/state/openclaw-talk",
                     configDirectory: path + "/config/openclaw-talk")
    }
}

final class ManualClock: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: Double) { current.withLock { $0 += seconds } }
    var closure: @Sendable () -> Date { { self.now } }
}

/// A Talk session standing in for the loop: records what it was asked, and lets tests set its state.
actor FakeSession: ControlledSession {
    private(set) var calls: [String] = []
    var state = SessionSnapshot()
    nonisolated let events: AsyncStream<SessionEvent>
    private let continuation: AsyncStream<SessionEvent>.Continuation

    init() { (events, continuation) = AsyncStream.makeStream(of: SessionEvent.self) }

    func pause() { calls.append("pause"); state.voice = .paused }
    func resume() { calls.append("resume"); state.voice = .listening }
    func reconnect() { calls.append("reconnect"); state.connection = .reconnecting }
    func talkStart() { calls.append("talkStart"); state.talkActive = true; state.voice = .listening }
    func talkStop() { calls.append("talkStop"); state.talkActive = false; state.voice = nil }
    func say(_ text: String) { calls.append("say:\(text)") }
    func pushToTalk(_ action: PushToTalkAction) { calls.append("ptt:\(action.rawValue)") }
    func notify(title: String, body: String, priority: String?) throws -> ControlJSON {
        calls.append("notify:\(title)")
        throw ControlError(code: "unsupported", message: "this session shows no notifications")
    }
    func snapshot() -> SessionSnapshot { state }
    func set(_ change: (inout SessionSnapshot) -> Void) { change(&state) }
    nonisolated func emit(_ event: SessionEvent) { continuation.yield(event) }
}

/// A control server serving a fake session in-process, as the daemon will serve the Talk loop.
final class Counter: Sendable {
    private let value = Mutex(0)
    func bump() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

struct ServiceHarness {
    let folder: TemporaryFolder
    let session = FakeSession()
    let status: StatusPublisher
    let server: ControlServer
    let stops = Counter()
    let relay: Task<Void, Never>

    init(peerCheck: PeerCheck = PeerCheck(), limits: ControlServer.Limits = .init()) throws {
        folder = try TemporaryFolder()
        let paths = folder.paths
        try RuntimePaths.ensurePrivateDirectory(paths.runtimeDirectory)
        let late = LateServer()
        var hooks = StatusPublisher.Hooks()
        hooks.publish = { s in late.server?.broadcast(ControlService.statusEvent(s)) }
        let logger = Logger(label: "test", handler: InMemoryLogHandler())
        status = StatusPublisher(file: StatusFile(path: paths.statusPath), hooks: hooks, logger: logger)
        let stops = self.stops
        let service = ControlService(session: session, status: status, onStop: { stops.bump() })
        server = try ControlServer.start(path: paths.socketPath, peerCheck: peerCheck, limits: limits,
                                         logger: logger) { await service.handle($0) }
        late.server = server
        let server = self.server
        relay = Task { await service.relayEvents(to: server) }
    }

    var socketPath: String { folder.paths.socketPath }

    func call(_ cmd: String, _ args: [String: ControlJSON] = [:]) async throws -> ControlResponse {
        let path = socketPath
        return try await offPool { try ControlClient(path: path).call(cmd, args: args) }
    }

    func shutdown() async {
        relay.cancel()
        await server.stop()
    }
}

final class LateServer: @unchecked Sendable {
    private let lock = NSLock()
    private var value: ControlServer?
    var server: ControlServer? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
