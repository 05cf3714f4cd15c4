import Testing

@testable import SessionBridge

/// Reading a peer's approval: leniently (older Gateways send less), boundedly (everything is the peer's choice).
struct PendingApprovalTests {
    @Test func `decisions follow the request and deny is always among them`() throws {
        let payload: JSONValue = ["id": "a1", "createdAtMs": 1000, "expiresAtMs": 2000,
                                  "request": ["command": "ls", "allowedDecisions": ["allow-once", "bogus"]]]
        let approval = try PendingApproval(payload: payload, kind: .exec, nowMs: 0)
        #expect(approval.allowedDecisions == [.allowOnce, .deny])
        let old = try PendingApproval(payload: ["id": "a2", "request": ["command": "ls"]], kind: .exec, nowMs: 5000)
        #expect(old.allowedDecisions == ApprovalDecision.allCases)
        #expect(old.expiresAtMs == 5000 + 1_800_000)
    }

    @Test func `a plugin id or approvalKind names the family whatever the event said`() throws {
        let plugin = try PendingApproval(payload: ["id": "plugin:x", "request": ["title": "Post"]], kind: .exec, nowMs: 0)
        #expect(plugin.kind == .plugin)
        #expect(plugin.headline == "Post")
    }

    @Test func `hostile fields are refused or cut`() throws {
        #expect(throws: PendingApproval.ParseError.badId) {
            try PendingApproval(payload: ["id": .string(String(repeating: "x", count: 300))], kind: .exec, nowMs: 0)
        }
        let long = try PendingApproval(payload: ["id": "a", "request": ["command": .string(String(repeating: "y", count: 100_000)),
                                                                         "commandArgv": .array(Array(repeating: "z", count: 10_000))]],
                                       kind: .exec, nowMs: 0)
        #expect(long.command?.count == 8192)
        #expect(long.commandArgv?.count == 256)
    }
}
