import Testing

@testable import SessionBridge

struct TalkConfigTests {
    @Test func `a talk.config result fills the Talk settings`() {
        let result: JSONValue = ["config": [
            "talk": [
                "provider": "elevenlabs", "silenceTimeoutMs": 1200, "interruptOnSpeech": false, "speechLocale": "de-DE", "idleTimeoutS": 30,
                "providers": ["elevenlabs": ["voiceId": "v1", "modelId": "m1", "outputFormat": "pcm_24000", "apiKey": "__OPENCLAW_REDACTED__"]],
                "resolved": ["provider": "elevenlabs", "config": ["voiceId": "v1"]],
            ],
            "session": ["mainKey": "work"],
        ]]
        var ignored: [String] = []
        let c = TalkConfig(gatewayResult: result, ignored: &ignored)
        #expect(c == TalkConfig(silenceTimeoutMs: 1200, interruptOnSpeech: false, provider: "elevenlabs", voiceId: "v1", modelId: "m1",
                                outputFormat: "pcm_24000", idleTimeoutS: 30, speechLocale: "de-DE", sessionMainKey: "work"))
        #expect(ignored.isEmpty)
        #expect(TalkConfig.builtIn.merging(c).merging(TalkConfig(silenceTimeoutMs: 500)).silenceTimeoutMs == 500)
        #expect(TalkConfig.builtIn.merging(TalkConfig()).silenceTimeoutMs == 700)
    }

    @Test func `wrong types are ignored by name and a missing config gives nothing`() {
        let result: JSONValue = ["config": ["talk": ["silenceTimeoutMs": "fast", "interruptOnSpeech": 1, "provider": ["x"],
                                                     "speechLocale": .string(String(repeating: "x", count: 10_000))]]]
        var ignored: [String] = []
        #expect(TalkConfig(gatewayResult: result, ignored: &ignored) == TalkConfig())
        #expect(Set(ignored) == ["silenceTimeoutMs", "interruptOnSpeech", "provider", "speechLocale"])
        var none: [String] = []
        #expect(TalkConfig(gatewayResult: nil, ignored: &none) == TalkConfig())
    }
}
