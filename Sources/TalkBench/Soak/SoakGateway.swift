import Foundation
import SessionBridge
import Synchronization

/// `bench soak`'s reference Gateway: started on free ports once, then killed and started again at the same
/// address and control port (`--state-dir` keeps the paired device). What it recorded (`chat-transcripts`) is
/// collected before each kill, so the count spans every Gateway process of the run.
final class SoakGateway: Sendable {
    private let repository: String
    private let stateDirectory: String
    private let token: String
    private let current = Mutex<ReferenceGatewayProcess?>(nil)
    private let ports = Mutex<(ws: Int, control: Int)?>(nil)
    private let records = Mutex<[String: SoakTally.Delivery]>([:])
    /// `halt()` was called (nothing starts any more), and whether a start is under way.
    private let halting = Mutex<(halted: Bool, starting: Bool)>((false, false))

    init(repository: String, stateDirectory: String, token: String) {
        self.repository = repository
        self.stateDirectory = stateDirectory
        self.token = token
    }

    var url: String { current.withLock { $0?.startup.url } ?? "" }

    /// Starts refgw (at the first start's ports after that) on a thread of its own: it blocks until refgw listens.
    /// After `halt()` it throws, and a start under way when it came stops the Gateway it started.
    func start() async throws {
        try halting.withLock { state in
            guard !state.halted else { throw BenchSoakError.part("bench soak is stopping: the Gateway is not started again") }
            state.starting = true
        }
        var arguments = ["--token", token, "--auto-approve", "--state-dir", stateDirectory]
        if let (ws, control) = ports.withLock({ $0 }) { arguments += ["--port", "\(ws)", "--control-port", "\(control)"] }
        let (repository, args) = (repository, arguments)
        let started: ReferenceGatewayProcess
        do {
            // It dies with the soak, however the soak ends (SIGKILL included).
            started = try await ReferenceGatewayProcess.forBenchmark(repositoryRoot: repository, arguments: args)
        } catch {
            halting.withLock { $0.starting = false }
            throw error
        }
        let halted = halting.withLock { state in
            if !state.halted {
                current.withLock { $0 = started }
                state.starting = false
            }
            return state.halted
        }
        guard !halted else {
            await soakThread { started.stop() }
            halting.withLock { $0.starting = false }
            throw BenchSoakError.part("bench soak is stopping: the Gateway just started was stopped")
        }
        ports.withLock { $0 = (started.startup.port, started.startup.controlPort) }
    }

    /// For good: kills the Gateway without collecting, and waits for a start under way to stop what it started.
    func halt() async {
        halting.withLock { $0.halted = true }
        await kill(collecting: false)
        while halting.withLock({ $0.starting }) { try? await Task.sleep(for: .milliseconds(20)) }
    }

    /// SIGKILL, as a crash or an upgrade that does not say goodbye; what it recorded is collected first (unless not
    /// `collecting`: a stop signal does not wait for a Gateway's answer).
    func kill(collecting: Bool = true) async {
        if collecting { collect() }
        let gone = current.withLock { g in defer { g = nil }; return g }
        await soakThread { gone?.stop() }
    }

    func stop() async { await kill() }

    /// A control command to the running Gateway; nil while none runs or when it did not answer.
    @discardableResult
    func control(_ line: String) -> JSONValue? {
        guard let gateway = current.withLock({ $0 }) else { return nil }
        return try? gateway.control(line)
    }

    /// The ids of the authenticated connections (the daemon's node and operator sockets).
    func authenticatedIds() -> Set<String>? {
        control("clients")?["clients"]?.arrayValue.map { list in
            Set(list.filter { $0["authenticated"]?.boolValue == true }.compactMap { $0["connId"]?.stringValue })
        }
    }

    /// Reads the Gateway's `chat.send` records into the run's.
    func collect() {
        guard let list = control("chat-transcripts")?["transcripts"]?.arrayValue else { return }
        records.withLock { all in
            for t in list {
                guard let key = t["idempotencyKey"]?.stringValue, let at = t["acceptedAtMs"]?.intValue else { continue }
                let delivery = SoakTally.Delivery(idempotencyKey: key, message: t["message"]?.stringValue ?? "", acceptedAtMs: Int64(at))
                if all[key].map({ delivery.acceptedAtMs < $0.acceptedAtMs }) ?? true { all[key] = delivery }
            }
        }
    }

    var deliveries: [SoakTally.Delivery] { records.withLock { Array($0.values) } }
}

/// Runs blocking work (a child's start, a socket call) on a thread of its own, never on the cooperative pool.
func soakThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { done in
        Thread { done.resume(with: Result { try body() }) }.start()
    }
}

func soakThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { done in
        Thread { done.resume(returning: body()) }.start()
    }
}
