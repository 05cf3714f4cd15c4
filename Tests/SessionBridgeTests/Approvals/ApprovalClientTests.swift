import Foundation
import TalkTestSupport
import Testing

@testable import SessionBridge

/// The operator's approvals against the reference Gateway: listed after hello-ok, reconciled with the events by id,
/// dropped at their expiry, decided with exactly the id asked for, and the Gateway's refusals read plainly.
@Suite struct ApprovalClientTests {
    static let approverScopes = ["operator.approvals", "operator.read", "operator.talk", "operator.write"]

    static func approver() -> ClientProfile {
        .operator(scopes: approverScopes, displayName: "Linux Talk test", version: "0.1.0-test")
    }

    /// Asks refgw's agent for an approval; returns its id.
    static func request(_ h: TalkGatewayHarness, _ fields: String = "") async throws -> String {
        let reply = try await h.gateway.control(#"{"cmd":"approval-request","command":"rm -rf build"\#(fields)}"#)
        return try #require(reply["approval"]?["id"]?.stringValue)
    }

    /// The next change, or nil after `timeout` (a broken client).
    static func next(_ changes: AsyncStream<ApprovalClient.Change>, timeout: Duration = .seconds(10)) async -> ApprovalClient.Change? {
        await withTaskGroup(of: ApprovalClient.Change?.self) { group in
            group.addTask { var i = changes.makeAsyncIterator(); return await i.next() }
            group.addTask { try? await Task.sleep(for: timeout); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    @Test func `one pending before the connect is listed and one asked for later arrives, each with its decisions`() async throws {
        let h = try await TalkGatewayHarness.start()
        let before = try await Self.request(h, #","ask":"always""#)
        let client = ApprovalClient(connection: try await h.connect(Self.approver()).connection, logger: h.logger)
        let changes = await client.changes()
        let running = Task { await client.run() }
        defer { running.cancel() }
        guard case .requested(let listed)? = await Self.next(changes) else { Issue.record("the pending approval was not listed"); return }
        #expect(listed.id == before)
        #expect(listed.allowedDecisions == [.allowOnce, .deny])
        #expect(listed.command == "rm -rf build")
        let after = try await Self.request(h)
        guard case .requested(let arrived)? = await Self.next(changes) else { Issue.record("the new approval did not arrive"); return }
        #expect(arrived.id == after)
        #expect(arrived.allowedDecisions == [.allowOnce, .allowAlways, .deny])
        #expect(await client.approvals.map(\.id) == [before, after])
        try h.gateway.expectNoViolations()
    }

    @Test func `a decision goes out for exactly the approval named, and the Gateway records it`() async throws {
        let h = try await TalkGatewayHarness.start()
        let client = ApprovalClient(connection: try await h.connect(Self.approver()).connection, logger: h.logger)
        let changes = await client.changes()
        let running = Task { await client.run() }
        defer { running.cancel() }
        let first = try await Self.request(h)
        _ = await Self.next(changes)
        let second = try await Self.request(h)
        _ = await Self.next(changes)
        try await client.resolve(id: first, decision: .allowOnce, exact: true)
        #expect(await Self.next(changes) == .resolved(id: first, decision: "allow-once", resolvedBy: nil, byUs: true))
        let resolutions = try await h.gateway.control("approvals")["resolutions"]?.arrayValue ?? []
        #expect(resolutions.map { [$0["id"]?.stringValue, $0["decision"]?.stringValue] } == [[first, "allow-once"]])
        #expect(await client.approvals.map(\.id) == [second])
        try h.gateway.expectNoViolations()
    }

    @Test func `an approval decided elsewhere is withdrawn with who decided`() async throws {
        let h = try await TalkGatewayHarness.start()
        let client = ApprovalClient(connection: try await h.connect(Self.approver()).connection, logger: h.logger)
        let changes = await client.changes()
        let running = Task { await client.run() }
        defer { running.cancel() }
        let id = try await Self.request(h)
        _ = await Self.next(changes)
        try await h.gateway.control(#"{"cmd":"approval-resolve","id":"\#(id)","decision":"deny","resolvedBy":"Phone"}"#)
        #expect(await Self.next(changes) == .resolved(id: id, decision: "deny", resolvedBy: "Phone", byUs: false))
        #expect(await client.approvals.isEmpty)
    }

    @Test func `an approval is dropped at its expiry, which the Gateway does not announce`() async throws {
        let h = try await TalkGatewayHarness.start()
        let client = ApprovalClient(connection: try await h.connect(Self.approver()).connection, logger: h.logger)
        let changes = await client.changes()
        let running = Task { await client.run() }
        defer { running.cancel() }
        let id = try await Self.request(h, #","expiresInMs":800"#)
        _ = await Self.next(changes)
        #expect(await Self.next(changes) == .expired(id: id))
        #expect(await client.approvals.isEmpty)
    }

    @Test func `the three refusals are read as what they mean`() async throws {
        let h = try await TalkGatewayHarness.start()
        let client = ApprovalClient(connection: try await h.connect(Self.approver()).connection, logger: h.logger)
        let running = Task { await client.run() }
        defer { running.cancel() }
        await #expect(throws: ApprovalResolveError.notFound(id: "nope")) { try await client.resolve(id: "nope", decision: .deny) }
        let onlyOnce = try await Self.request(h, #","ask":"always""#)
        await #expect(throws: ApprovalResolveError.allowAlwaysUnavailable(id: onlyOnce)) {
            try await client.resolve(id: onlyOnce, decision: .allowAlways)
        }
        let decided = try await Self.request(h)
        try await h.gateway.control(#"{"cmd":"approval-resolve","id":"\#(decided)","decision":"deny"}"#)
        await #expect(throws: ApprovalResolveError.alreadyResolved(id: decided)) {
            try await client.resolve(id: decided, decision: .allowOnce, exact: true)
        }
    }

    /// What the client sent, by method, from refgw's record of received frames.
    static func methodsSent(_ h: TalkGatewayHarness) async throws -> [String] {
        let frames = try await h.gateway.control(#"{"cmd":"frames","last":50}"#)["frames"]?.arrayValue ?? []
        return frames.compactMap { $0["frame"]?["method"]?.stringValue }
    }

    @Test func `a plugin approval is listed and followed like an exec one, and decided with plugin.approval.resolve`() async throws {
        let h = try await TalkGatewayHarness.start()
        let before = try await Self.request(h, #","kind":"plugin","command":"Post to the channel""#)
        let client = ApprovalClient(connection: try await h.connect(Self.approver()).connection, logger: h.logger)
        let changes = await client.changes()
        let running = Task { await client.run() }
        defer { running.cancel() }
        guard case .requested(let listed)? = await Self.next(changes) else { Issue.record("the pending plugin approval was not listed"); return }
        #expect(listed.id == before && listed.kind == .plugin)
        #expect(listed.headline == "Post to the channel")
        #expect(listed.toolName == "refgw.tool")
        let after = try await Self.request(h, #","kind":"plugin","command":"Delete the draft","ask":"always""#)
        guard case .requested(let arrived)? = await Self.next(changes) else { Issue.record("the plugin approval's event was not followed"); return }
        #expect(arrived.id == after && arrived.kind == .plugin)
        #expect(arrived.allowedDecisions == [.allowOnce, .deny])

        try await client.resolve(id: before, decision: .allowOnce, exact: true)
        #expect(await Self.next(changes) == .resolved(id: before, decision: "allow-once", resolvedBy: nil, byUs: true))
        #expect(try await Self.methodsSent(h).filter { $0.hasSuffix("approval.resolve") } == ["plugin.approval.resolve"])
        let resolutions = try await h.gateway.control("approvals")["resolutions"]?.arrayValue ?? []
        #expect(resolutions.map { [$0["id"]?.stringValue, $0["kind"]?.stringValue, $0["decision"]?.stringValue] }
                == [[before, "plugin", "allow-once"]])
        // Decided elsewhere, it is withdrawn as an exec one is.
        try await h.gateway.control(#"{"cmd":"approval-resolve","id":"\#(after)","decision":"deny","resolvedBy":"Phone"}"#)
        #expect(await Self.next(changes) == .resolved(id: after, decision: "deny", resolvedBy: "Phone", byUs: false))
        #expect(await client.approvals.isEmpty)
        try h.gateway.expectNoViolations()
    }

    @Test func `where hello-ok lists the unified methods a plugin decision goes through approval.resolve with its kind`() async throws {
        let h = try await TalkGatewayHarness.start(["--unified-approvals"])
        let client = ApprovalClient(connection: try await h.connect(Self.approver()).connection, logger: h.logger)
        let changes = await client.changes()
        let running = Task { await client.run() }
        defer { running.cancel() }
        let id = try await Self.request(h, #","kind":"plugin","command":"Post to the channel""#)
        _ = await Self.next(changes)
        try await client.resolve(id: id, decision: .deny, exact: true)
        let frames = try await h.gateway.control(#"{"cmd":"frames","last":50}"#)["frames"]?.arrayValue ?? []
        let resolves = frames.filter { $0["frame"]?["method"]?.stringValue?.hasSuffix("approval.resolve") == true }
        #expect(resolves.map { $0["frame"]?["method"]?.stringValue } == ["approval.resolve"])
        #expect(resolves.first?["frame"]?["params"]?["kind"] == "plugin")
        let resolutions = try await h.gateway.control("approvals")["resolutions"]?.arrayValue ?? []
        #expect(resolutions.map { [$0["id"]?.stringValue, $0["kind"]?.stringValue, $0["decision"]?.stringValue] } == [[id, "plugin", "deny"]])
        try h.gateway.expectNoViolations()
    }

    /// The Gateway restarts (its socket down for a while): an approval asked for meanwhile reached nobody, and one
    /// decided meanwhile told nobody. The list after the reconnect's hello-ok brings the first and drops the second.
    @Test func `after a reconnect the list brings what was asked meanwhile and drops what was decided meanwhile`() async throws {
        let h = try await TalkGatewayHarness.start()
        let client = ApprovalClient(connection: try await h.connect(Self.approver()).connection, logger: h.logger)
        let changes = await client.changes()
        let running = Task { await client.run() }
        defer { running.cancel() }
        let decidedAway = try await Self.request(h)
        guard case .requested? = await Self.next(changes) else { Issue.record("the first approval did not arrive"); return }
        let stays = try await Self.request(h, #","command":"ls""#)
        guard case .requested? = await Self.next(changes) else { Issue.record("the second approval did not arrive"); return }

        try await h.gateway.control(#"{"cmd":"restart","downMs":3000}"#)
        let asked = try await h.gateway.control(#"{"cmd":"approval-request","command":"make install"}"#)
        let askedAway = try #require(asked["approval"]?["id"]?.stringValue)
        #expect(asked["deliveredTo"]?.arrayValue?.isEmpty == true, "asked while the socket was still up")
        try await h.gateway.control(#"{"cmd":"approval-resolve","id":"\#(decidedAway)","decision":"deny","resolvedBy":"Phone"}"#)

        var seen: [ApprovalClient.Change] = []
        while seen.count < 2, let change = await Self.next(changes, timeout: .seconds(15)) { seen.append(change) }
        #expect(seen.contains { if case .requested(let a) = $0 { a.id == askedAway } else { false } }, "\(seen)")
        #expect(seen.contains(.resolved(id: decidedAway, decision: nil, resolvedBy: nil, byUs: false)), "\(seen)")
        #expect(Set(await client.approvals.map(\.id)) == [stays, askedAway])
        try h.gateway.expectNoViolations()
    }

    /// A request in older Gateways' shape lists no decisions, so all three are taken as offered until the Gateway
    /// refuses one: then it is no longer offered here (a notification or a prompt shows only what is left).
    @Test func `allow always refused by the Gateway is no longer offered, and the approval stays pending`() async throws {
        let h = try await TalkGatewayHarness.start()
        let client = ApprovalClient(connection: try await h.connect(Self.approver()).connection, logger: h.logger)
        let changes = await client.changes()
        let running = Task { await client.run() }
        defer { running.cancel() }
        let id = try await Self.request(h, #","ask":"always","legacyShape":true"#)
        guard case .requested(let asked)? = await Self.next(changes) else { Issue.record("the approval did not arrive"); return }
        #expect(asked.allowedDecisions == [.allowOnce, .allowAlways, .deny])
        await #expect(throws: ApprovalResolveError.allowAlwaysUnavailable(id: id)) {
            try await client.resolve(id: id, decision: .allowAlways, exact: true)
        }
        #expect(await client.approvals.map(\.allowedDecisions) == [[.allowOnce, .deny]])
        #expect(try await h.gateway.control("approvals")["resolutions"]?.arrayValue?.isEmpty == true)
    }

    @Test func `without the approvals scope the list says so`() async throws {
        let h = try await TalkGatewayHarness.start()
        let client = ApprovalClient(connection: try await h.connect(TalkGatewayHarness.operatorProfile).connection, logger: h.logger)
        #expect(await client.refreshReportingFailure() == .missingScope)
    }

    @Test func `where hello-ok lists the unified methods a decision goes through approval.resolve`() async throws {
        let h = try await TalkGatewayHarness.start(["--unified-approvals"])
        let connection = try await h.connect(Self.approver()).connection
        let client = ApprovalClient(connection: connection, logger: h.logger)
        let running = Task { await client.run() }
        defer { running.cancel() }
        let id = try await Self.request(h)
        try await client.resolve(id: id, decision: .deny, exact: true)
        let frames = try await h.gateway.control(#"{"cmd":"frames","last":20}"#)["frames"]?.arrayValue ?? []
        let methods = frames.compactMap { $0["frame"]?["method"]?.stringValue }
        #expect(methods.contains("approval.resolve"))
        #expect(!methods.contains("exec.approval.resolve"))
        try h.gateway.expectNoViolations()
    }
}
