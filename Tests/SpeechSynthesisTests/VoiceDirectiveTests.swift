import Testing

@testable import SpeechSynthesis

/// The voice directive on a reply's first line: parsed into settings, never spoken.
@Suite struct VoiceDirectiveTests {
    @Test func `a directive line is parsed and stripped`() {
        let (directive, sentences) = SpokenReply.sentences(of: "{\"voice\":\"en-gb\",\"rate\":200,\"once\":true}\nHello there.")
        #expect(directive == VoiceDirective(voice: "en-gb", rateWPM: 200, once: true))
        #expect(sentences == ["Hello there."])
    }

    @Test func `every documented key and alias is read; unknown keys and wrong types are ignored`() {
        let line = #"{"voice_id":"v1","modelId":"m2","speed":1.25,"stability":0.5,"similarity":0.75,"style":0.1,"# + #""speakerBoost":true,"seed":42,"normalize":"auto","lang":"en","output_format":"pcm_22050","# + #""latency_tier":3,"unknown":{"x":1},"rate":"fast"}"#
        let (directive, sentences) = SpokenReply.sentences(of: line + "\nOK.")
        #expect(directive == VoiceDirective(
            voice: "v1", model: "m2", speed: 1.25, rateWPM: nil, stability: 0.5, similarity: 0.75, style: 0.1,
            speakerBoost: true, seed: 42, normalize: "auto", language: "en", outputFormat: "pcm_22050",
            latencyTier: 3, once: false))
        #expect(sentences == ["OK."])
        #expect(VoiceDirective.extract(from: #"{"voiceId":"v3"}"# + "\nx", complete: true)
            == .found(VoiceDirective(voice: "v3"), bodyOffset: 17))
    }

    /// As in the OpenClaw apps: a first line that is not a JSON object with a known key is the reply's text.
    @Test(arguments: [
        #"{"voice": "en-gb", oops}"#,
        #"{not json at all}"#,
        #"{"greeting": "hello"}"#,
        #"{"voice": "en-gb""#,
    ])
    func `a malformed or unknown first line is spoken as text`(line: String) {
        let (directive, sentences) = SpokenReply.sentences(of: line + "\nSecond line.")
        #expect(directive == nil)
        #expect(sentences.last == "Second line.")
        #expect(sentences.count == 2)
    }

    @Test func `without once the directive is a new default, and it sets the local voice and rate`() throws {
        let (directive, _) = SpokenReply.sentences(of: "{\"voice\":\"en+f3\",\"speed\":1.2}\nHi.")
        let found = try #require(directive)
        #expect(found.once == false)
        let settings = found.applied(to: VoiceSettings(voice: "en-us", rateWPM: 175, pitch: 40))
        var directed = VoiceSettings(voice: "en+f3", rateWPM: 210, pitch: 40)
        directed.configuredVoice = "en-us"  // the user's, spoken when the engine does not list the directive's
        #expect(settings == directed)
        #expect(VoiceDirective(rateWPM: 150, once: true).applied(to: .default).rateWPM == 150)
    }

    @Test func `streaming waits for the whole first line before deciding`() {
        var reply = SpokenReply()
        #expect(reply.append("{\"voice\":") == [])
        #expect(reply.append("\"en-gb\"}") == [])
        #expect(!reply.directiveSettled)
        #expect(reply.append("\nFirst sentence. Sec") == ["First sentence."])
        #expect(reply.directive?.voice == "en-gb")
        #expect(reply.append("ond one.") == [])
        #expect(reply.finish() == ["Second one."])
    }

    @Test func `a reply without a directive starts speaking at once`() {
        var reply = SpokenReply()
        #expect(reply.append("Sure. ") == ["Sure."])
        #expect(reply.directiveSettled && reply.directive == nil)
    }

    @Test func `a reply that is only a directive says nothing`() {
        let (directive, sentences) = SpokenReply.sentences(of: "{\"once\":true}")
        #expect(directive == VoiceDirective(once: true))
        #expect(sentences.isEmpty)
    }

    @Test func `a huge brace line is text, not a wait`() {
        var reply = SpokenReply()
        _ = reply.append("{" + String(repeating: "a ", count: 3000))
        #expect(reply.directiveSettled && reply.directive == nil)
    }
}
