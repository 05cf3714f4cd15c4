import Testing

@testable import SessionBridge

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
        (["runId": .string(String(repeating: "r", count: 600)), "sessionKey": "main", "seq": 0, "state": "delta"], .tooLarge(field: "runId", bytes: 600)),
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
