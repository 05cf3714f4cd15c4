import Testing

@testable import SpeechSynthesis

/// Replies in response-envelope form, as the OpenClaw apps read them (TalkResponseEnvelope.swift,
/// TalkResponseEnvelopeParser.kt): only `response` is spoken; plain text and the voice directive as before.
@Suite struct ResponseEnvelopeTests {
    static func spoken(_ text: String) -> [String] { SpokenReply.sentences(of: text).1 }

    @Test(arguments: [
        #"{"response":"I will check that.","status":"working"}"#,
        "  {\n  \"response\": \"I will check that.\",\n  \"display\": \"Checking the build log…\"\n}\n",
        "```json\n{\"response\":\"I will check that.\",\"actions\":[{\"type\":\"open\"}]}\n```",
        "```\n{\"response\": \"I will check that.\"}\n```",
        "{\"response\":\"I will check that.\"}\nnon-spoken diagnostic: exit 1 in step 3.",
        "{\"response\":\"  I will check that.  \"}\r\n\r\nmore for the screen",
    ])
    func `an envelope speaks its response only`(reply: String) {
        #expect(Self.spoken(reply) == ["I will check that."])
    }

    @Test(arguments: [
        #"{"response":"","display":"shown only"}"#,
        #"{"response":null,"status":"done"}"#,
        #"{"response":42}"#,
        "```json\n{\"response\": \"   \", \"summary\": \"x\"}\n```",
    ])
    func `an empty or non-string response speaks nothing`(reply: String) {
        #expect(Self.spoken(reply) == [])
    }

    @Test(arguments: [
        "Plain reply. With two sentences.",
        #"{"greeting":"hello"}"# + "\nSecond line.",
        "{not json} but it ends in a brace }",
        "```python\nprint(1)\n```",
    ])
    func `anything else is spoken as text`(reply: String) {
        #expect(Self.spoken(reply) != [])
    }

    @Test func `a voice directive line still goes first, then the envelope`() {
        let (directive, sentences) = SpokenReply.sentences(of: "{\"voice\":\"en-gb\",\"once\":true}\n{\"response\":\"Done.\",\"display\":\"done in 3 s\"}")
        #expect(directive == VoiceDirective(voice: "en-gb", once: true))
        #expect(sentences == ["Done."])
    }

    @Test func `streamed: a first-line envelope is spoken once its line is complete, the rest never`() {
        var reply = SpokenReply()
        #expect(reply.append("{\"response\":\"First part. Sec") == [])
        #expect(reply.append("ond part.\",\"status\":\"ok\"}") == [])
        #expect(reply.append("\nTrace: step one. Step two.") == ["First part."])
        #expect(reply.append(" More trace.") == [])
        #expect(reply.finish() == ["Second part."])
    }

    @Test func `streamed: a pretty-printed envelope is held to the end, plain text is not held`() {
        var reply = SpokenReply()
        #expect(reply.append("{\n  \"response\": \"All set. ") == [])
        #expect(reply.append("Anything else?\",\n  \"display\": \"x\"\n}") == [])
        #expect(reply.finish() == ["All set.", "Anything else?"])
        var plain = SpokenReply()
        #expect(plain.append("Sure. ") == ["Sure."])
    }

    @Test func `a reply held as a possible envelope is released as text beyond the limit`() {
        var reply = SpokenReply()
        let long = "{" + String(repeating: "word ", count: 64 * 1024 / 5 + 1)   // over 64 KiB
        #expect(reply.append(long) != [])
    }
}
