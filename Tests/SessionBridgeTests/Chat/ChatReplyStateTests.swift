import Testing

@testable import SessionBridge

struct InterruptionPrefixTests {
    @Test(arguments: [
        (2.34, "Assistant speech interrupted at 2.3s.\n\nwhat next"),
        (0.05, "Assistant speech interrupted at 0.1s.\n\nwhat next"),
        (12.0, "Assistant speech interrupted at 12.0s.\n\nwhat next"),
        (-3.0, "Assistant speech interrupted at 0.0s.\n\nwhat next"),
        (Double.nan, "Assistant speech interrupted at 0.0s.\n\nwhat next"),
    ])
    func `an interrupted reply prefixes the next transcript with the offset and a blank line`(seconds: Double, expected: String) {
        #expect(InterruptionPrefix.message(transcript: "what next", interruptedAtSeconds: seconds) == expected)
    }

    @Test func `without an interruption the transcript goes as it is`() throws {
        #expect(InterruptionPrefix.message(transcript: "hello", interruptedAtSeconds: nil) == "hello")
    }
}

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

struct ChatEventPayloadTests {
    @Test func `message content may be a string, a string content or text parts`() throws {
        #expect(try ChatEventPayload.messageText("plain", field: "m") == "plain")
        #expect(try ChatEventPayload.messageText(["role": "assistant", "content": "inner"], field: "m") == "inner")
        let parts: JSONValue = ["role": "assistant", "content": [["type": "text", "text": "a"], ["type": "image"], ["type": "text", "text": "b"]]]
        #expect(try ChatEventPayload.messageText(parts, field: "m") == "a\nb")
    }

    @Test(arguments: [
        (JSONValue.string("nope"), ChatPayloadError.notAnObject),
        (["sessionKey": "main", "seq": 0, "state": "delta"], .missingField("runId")),
        (["runId": 7, "sessionKey": "main", "seq": 0, "state": "delta"], .wrongType(field: "runId", expected: "non-empty string")),
        (["runId": "r", "sessionKey": "main", "seq": -1, "state": "delta"], .wrongType(field: "seq", expected: "integer >= 0")),
        (["runId": "r", "sessionKey": "main", "state": "delta"], .missingField("seq")),
        (["runId": "r", "sessionKey": "main", "seq": 0, "state": "thinking"], .wrongType(field: "state", expected: "delta, final, aborted or error")),
        (["runId": "r", "sessionKey": "main", "seq": 0, "state": "delta", "replace": "yes"], .wrongType(field: "replace", expected: "boolean")),
        (["runId": "r", "sessionKey": "main", "seq": 0, "state": "final", "message": ["content": 5]],
         .wrongType(field: "message.content", expected: "string or array of parts")),
        (["runId": "r", "sessionKey": "main", "seq": 0, "state": "final", "message": ["content": [["type": "text", "text": 1]]]],
         .wrongType(field: "message.content[].text", expected: "string")),
    ] as [(JSONValue, ChatPayloadError)])
    func `malformed payloads are refused naming the field`(json: JSONValue, expected: ChatPayloadError) {
        #expect(throws: expected) { _ = try ChatEventPayload(json: json) }
    }

    @Test func `a huge text is refused, not kept`() throws {
        let huge = String(repeating: "x", count: 300_000)  // well over any spoken reply
        let json: JSONValue = ["runId": "r", "sessionKey": "main", "seq": 0, "state": "delta", "deltaText": .string(huge)]
        #expect(throws: ChatPayloadError.tooLarge(field: "deltaText", bytes: huge.utf8.count)) { _ = try ChatEventPayload(json: json) }
    }
}
