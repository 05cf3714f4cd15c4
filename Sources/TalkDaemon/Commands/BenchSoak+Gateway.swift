import Foundation
import SessionBridge
import Synchronization
import TalkBench

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

    init(repository: String, stateDirectory: String, token: String) {
        self.repository = repository
        self.stateDirectory = stateDirectory
        self.token = token
    }

    var url: String { current.withLock { $0?.startup.url } ?? "" }

    /// Starts refgw (at the first start's ports after that) on a thread of its own: it blocks until refgw listens.
    func start() async throws {
        var arguments = ["--token", token, "--auto-approve", "--state-dir", stateDirectory]
        if let (ws, control) = ports.withLock({ $0 }) { arguments += ["--port", "\(ws)", "--control-port", "\(control)"] }
        let (repository, args) = (repository, arguments)
        let started = try await soakThread { try ReferenceGatewayProcess(repositoryRoot: repository, arguments: args) }
        ports.withLock { $0 = (started.startup.port, started.startup.controlPort) }
        current.withLock { $0 = started }
    }

    /// SIGKILL, as a crash or an upgrade that does not say goodbye; what it recorded is collected first.
    func kill() async {
        collect()
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
