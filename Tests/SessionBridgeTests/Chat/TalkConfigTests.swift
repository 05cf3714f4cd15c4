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

    /// As the Apple apps read it (TalkConfigParsing.swift): the Gateway's `resolved` provider and config first.
    @Test func `resolved comes first: its provider and config over provider and providers`() {
        let result: JSONValue = ["config": ["talk": [
            "provider": "ElevenLabs",
            "providers": ["ElevenLabs": ["voiceId": "raw-voice", "modelId": "raw-model", "outputFormat": "mp3_44100_128"],
                          "elevenlabs": ["voiceId": "other"]],
            "resolved": ["provider": "elevenlabs", "config": ["voiceId": "resolved-voice", "modelId": "resolved-model"]],
        ]]]
        var ignored: [String] = []
        let c = TalkConfig(gatewayResult: result, ignored: &ignored)
        #expect(c.provider == "elevenlabs" && c.voiceId == "resolved-voice" && c.modelId == "resolved-model", "\(c)")
        // What resolved.config leaves out comes from the resolved provider's own entry.
        #expect(c.outputFormat == nil, "\(c)")
        #expect(ignored.isEmpty)
        let older: JSONValue = ["config": ["talk": ["provider": "elevenlabs", "providers": ["elevenlabs": ["voiceId": "v9", "modelId": "m9"]]]]]
        let fromProviders = TalkConfig(gatewayResult: older, ignored: &ignored)
        #expect(fromProviders.provider == "elevenlabs" && fromProviders.voiceId == "v9" && fromProviders.modelId == "m9")
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
