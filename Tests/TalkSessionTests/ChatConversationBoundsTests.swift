import Foundation
import SessionBridge
import Synchronization
import TalkLogging
import Testing

@testable import TalkSession

/// A Gateway socket whose `chat` events the test hands over one by one, counting how many the client has taken
/// (it takes the next only once it has handled the one before).
actor PacedChatGateway: GatewayCalling {
    private var waiting: [GatewayFrame.Event] = []
    private var reader: CheckedContinuation<GatewayFrame.Event?, Never>?
    private(set) var taken = 0

    func request(method: String, params: JSONValue?, timeout: Duration?) async throws(GatewayRequestError) -> JSONValue? {
        method == "chat.send" ? ["runId": "run-1", "status": "started"] : [:]
    }

    func request(method: String, params: JSONValue?, timeout: Duration?,
                 written: @escaping @Sendable () -> Void) async throws(GatewayRequestError) -> JSONValue? {
        written()
        return try await request(method: method, params: params, timeout: timeout)
    }

    var hello: HelloOk? { nil }

    nonisolated func eventUpdates() -> AsyncStream<GatewayFrame.Event> { AsyncStream(unfolding: { await self.next() }) }
    nonisolated func stateUpdates() -> AsyncStream<ConnectionState> { AsyncStream { $0.yield(.connected(serverVersion: "test")) } }

    func push(_ payload: JSONValue) {
        let event = GatewayFrame.Event(name: "chat", payload: payload)
        if let reader {
            self.reader = nil
            taken += 1
            reader.resume(returning: event)
        } else {
            waiting.append(event)
        }
    }

    private func next() async -> GatewayFrame.Event? {
        if !waiting.isEmpty {
            taken += 1
            return waiting.removeFirst()
        }
        return await withCheckedContinuation { reader = $0 }
    }

    var idle: Bool { waiting.isEmpty && reader != nil }
}

@Suite struct ChatConversationBoundsTests {
    /// Each partial is the whole reply so far: a loop busy speaking must not find every one of them queued.
    @Test func `a reply the loop has not read yet is held as its newest text, not every partial`() async throws {
        let logger = Logger(label: "t", handler: InMemoryLogHandler())
        let gateway = PacedChatGateway()
        let client = ChatClient(connection: gateway, outbox: ChatOutbox(file: nil, logger: logger), logger: logger)
        let running = Task { await client.run() }
        defer { running.cancel() }
        let conversation = ChatConversation(client)
        let updates = await conversation.converse("tell me a long story", interruptedAtSeconds: nil)
        var reading = updates.makeAsyncIterator()
        // The ack first (its run's events are the reply's from then on), as the loop reads it.
        guard case .accepted(runId: "run-1", _)? = await reading.next() else { Issue.record("no ack"); return }
        var text = ""
        for seq in 0..<500 {
            text += "word \(seq) "
            await gateway.push(["runId": "run-1", "sessionKey": "main", "seq": .int(Int64(seq)), "state": "delta",
                                "deltaText": .string("word \(seq) ")])
            // Handled before the next comes, as a Gateway paced by the agent sends them; whatever moves updates
            // on to the loop gets its turn too.
            while !(await gateway.idle) { await Task.yield() }
            for _ in 0..<4 { await Task.yield() }
        }
        await gateway.push(["runId": "run-1", "sessionKey": "main", "seq": 500, "state": "final", "message": .string(text)])
        // Every event handled: the client waits for the next one.
        for _ in 0..<500 where !(await gateway.idle) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await gateway.idle)
        var seen: [ChatReplyUpdate] = []
        while let update = await reading.next() { seen.append(update) }
        #expect(seen.count <= 2, "\(seen.count) updates were queued for the loop")
        #expect(seen.last == .final(text, source: .events))
    }
}
