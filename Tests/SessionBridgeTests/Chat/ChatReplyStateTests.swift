import Testing

@testable import SessionBridge

struct ChatReplyStateTests {
    static func event(_ seq: Int64, _ state: String, delta: String? = nil, replace: Bool? = nil, message: JSONValue? = nil,
                      errorKind: String? = nil) throws -> ChatEventPayload {
        var o: [String: JSONValue] = ["runId": "r1", "sessionKey": "main", "seq": .int(seq), "state": .string(state)]
        if let delta { o["deltaText"] = .string(delta) }
        if let replace { o["replace"] = .bool(replace) }
        if let message { o["message"] = message }
        if let errorKind { o["errorKind"] = .string(errorKind) }
        return try ChatEventPayload(json: .object(o))
    }

    @Test func `deltas append in seq order and final gives the whole text`() throws {
        var s = ChatReplyState()
        #expect(s.apply(try Self.event(0, "delta", delta: "Hel")) == .partial("Hel", replaced: false))
        #expect(s.apply(try Self.event(1, "delta", delta: "lo")) == .partial("Hello", replaced: false))
        #expect(s.apply(try Self.event(2, "final", message: "Hello there")) == .final("Hello there", source: .events))
        #expect(s.apply(try Self.event(3, "delta", delta: "late")) == nil, "nothing counts after final")
        #expect(s.text == "Hello there")
    }

    @Test func `a replace delta replaces and says so`() throws {
        var s = ChatReplyState()
        _ = s.apply(try Self.event(0, "delta", delta: "first try"))
        #expect(s.apply(try Self.event(1, "delta", delta: "second", replace: true)) == .partial("second", replaced: true))
        #expect(s.apply(try Self.event(2, "final")) == .final("second", source: .events))
    }

    @Test func `duplicate and older seq are ignored`() throws {
        var s = ChatReplyState()
        _ = s.apply(try Self.event(0, "delta", delta: "a"))
        _ = s.apply(try Self.event(1, "delta", delta: "b"))
        #expect(s.apply(try Self.event(1, "delta", delta: "b")) == nil)
        #expect(s.apply(try Self.event(0, "delta", delta: "a")) == nil)
        #expect(s.text == "ab")
    }

    @Test func `a cumulative snapshot repairs a missed delta`() throws {
        var s = ChatReplyState()
        _ = s.apply(try Self.event(0, "delta", delta: "one "))
        let snapshot: JSONValue = ["role": "assistant", "content": [["type": "text", "text": "one two three"]]]
        #expect(s.apply(try Self.event(2, "delta", delta: "three", message: snapshot)) == .partial("one two three", replaced: false))
    }

    @Test func `error and aborted end the reply`() throws {
        var s = ChatReplyState()
        #expect(s.apply(try Self.event(0, "error", errorKind: "rate_limit")) == .failed(.agentError(kind: "rate_limit", message: nil)))
        var t = ChatReplyState()
        _ = t.apply(try Self.event(0, "delta", delta: "par"))
        #expect(t.apply(try Self.event(1, "aborted")) == .aborted("par"))
    }
}
