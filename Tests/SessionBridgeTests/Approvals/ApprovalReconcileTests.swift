import Foundation
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge

/// The list after a reconnect against events arriving while it is on its way, with a Gateway whose list answers the
/// test releases: the order the reference Gateway cannot be made to produce on demand.
@Suite struct ApprovalReconcileTests {
    /// A Gateway socket whose `exec.approval.list` answers wait for the test; no hello-ok (legacy methods only).
    actor HeldListGateway: GatewayCalling {
        var hello: HelloOk? { nil }
        private let events: AsyncStream<GatewayFrame.Event>
        private let eventSink: AsyncStream<GatewayFrame.Event>.Continuation
        private let states: AsyncStream<ConnectionState>
        private let stateSink: AsyncStream<ConnectionState>.Continuation
        /// One element per list request, as it is asked.
        let listAsked: AsyncStream<Void>
        private let listAskedSink: AsyncStream<Void>.Continuation
        private var heldList: CheckedContinuation<JSONValue?, Never>?

        init() {
            (events, eventSink) = AsyncStream.makeStream(of: GatewayFrame.Event.self)
            (states, stateSink) = AsyncStream.makeStream(of: ConnectionState.self)
            (listAsked, listAskedSink) = AsyncStream.makeStream(of: Void.self)
        }

        func eventUpdates() -> AsyncStream<GatewayFrame.Event> { events }
        func stateUpdates() -> AsyncStream<ConnectionState> { states }

        func request(method: String, params: JSONValue?, timeout: Duration?) async throws(GatewayRequestError) -> JSONValue? {
            guard method == "exec.approval.list" else { return ["ok": true] }
            return await withCheckedContinuation { continuation in
                heldList = continuation
                listAskedSink.yield()
            }
        }

        func request(method: String, params: JSONValue?, timeout: Duration?,
                     written: @escaping @Sendable () -> Void) async throws(GatewayRequestError) -> JSONValue? {
            written()
            return try await request(method: method, params: params, timeout: timeout)
        }

        nonisolated func connected() { stateSink.yield(.connected(serverVersion: "test")) }
        nonisolated func send(_ name: String, _ payload: JSONValue) { eventSink.yield(.init(name: name, payload: payload)) }

        /// Answers the list request on its way with these approvals.
        func answerList(_ approvals: [JSONValue]) {
            heldList?.resume(returning: .array(approvals))
            heldList = nil
        }
    }

    static func approval(_ id: String, _ command: String) -> JSONValue {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return ["id": .string(id), "createdAtMs": .int(now), "expiresAtMs": .int(now + 600_000),
                "request": ["command": .string(command), "allowedDecisions": ["allow-once", "deny"]]]
    }

    /// A reconnect's list is on its way when a new approval's event comes; the list (taken before it) does not hold
    /// the new one, nor the one decided while the socket was down. The new one stays (it came by event) and the one
    /// decided away is dropped all the same: an event about another approval says nothing about it.
    @Test func `an event while the reconnect's list is on its way does not keep an approval decided while away`() async throws {
        let gateway = HeldListGateway()
        let client = ApprovalClient(connection: gateway, logger: Logger(label: "test", handler: InMemoryLogHandler()))
        let changes = await client.changes()
        var asked = gateway.listAsked.makeAsyncIterator()
        let running = Task { await client.run() }
        defer { running.cancel() }

        gateway.connected()
        _ = await asked.next()
        await gateway.answerList([Self.approval("a", "ls"), Self.approval("b", "rm -rf build")])
        let first = await ApprovalClientTests.next(changes)
        let second = await ApprovalClientTests.next(changes)
        try #require([first, second].allSatisfy { if case .requested = $0 { true } else { false } }, "\(String(describing: first)), \(String(describing: second))")

        gateway.connected()
        _ = await asked.next()
        gateway.send("exec.approval.requested", Self.approval("c", "make install"))
        guard case .requested(let arrived)? = await ApprovalClientTests.next(changes) else { Issue.record("the new approval's event was not followed"); return }
        #expect(arrived.id == "c")
        await gateway.answerList([Self.approval("a", "ls")])
        #expect(await ApprovalClientTests.next(changes, timeout: .seconds(5)) == .resolved(id: "b", decision: nil, resolvedBy: nil, byUs: false))
        #expect(await client.approvals.map(\.id) == ["a", "c"])
    }
}
