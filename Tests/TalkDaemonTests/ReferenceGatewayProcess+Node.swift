import SessionBridge
import TalkBench
import TalkTestSupport

extension ReferenceGatewayProcess {
    /// The reference Gateway's authenticated node connection (`clients`), or nil while none is connected.
    func authenticatedNode() async throws -> JSONValue? {
        let clients = try await offPool { try self.control("clients") }["clients"]?.arrayValue ?? []
        return clients.first { $0["role"] == "node" && $0["authenticated"] == true }
    }
}
