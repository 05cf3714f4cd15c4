import Testing

@testable import SessionBridge

/// `talk.config`'s `talk.realtime`, read as the iOS app reads it (TalkModeGatewayConfig.swift), and what a realtime
/// relay session is created with.
struct TalkRealtimeSelectionTests {
    static func read(_ realtime: JSONValue) -> (TalkRealtimeSelection?, [String]) {
        var ignored: [String] = []
        let config = TalkConfig(gatewayResult: ["config": ["talk": ["realtime": realtime]]], ignored: &ignored)
        return (config.realtime, ignored)
    }

    @Test func `top-level choices first, then the provider's entry, then the only entry`() {
        #expect(Self.read(["provider": "openai", "model": "gpt-realtime", "voice": "marin",
                           "providers": ["openai": ["model": "other", "voice": "other"]]]).0
            == TalkRealtimeSelection(provider: "openai", model: "gpt-realtime", voice: "marin"))
        #expect(Self.read(["provider": "OpenAI", "providers": ["openai": ["modelId": "gpt-realtime-mini", "speakerVoice": "cedar"]]]).0
            == TalkRealtimeSelection(provider: "OpenAI", model: "gpt-realtime-mini", voice: "cedar"))
        #expect(Self.read(["providers": ["google": ["model": "gemini-live", "voiceId": "Puck"]]]).0
            == TalkRealtimeSelection(provider: "google", model: "gemini-live", voice: "Puck"))
        #expect(Self.read(["providers": ["a": ["model": "x"], "b": ["model": "y"]]]).0 == nil)
        #expect(Self.read(["mode": "realtime"]).0 == nil)
    }

    @Test func `wrong types and oversize values are ignored by name`() {
        let (selection, ignored) = Self.read(["provider": 7, "model": .string(String(repeating: "m", count: 300)), "voice": "alloy"])
        #expect(selection == TalkRealtimeSelection(voice: "alloy"))
        #expect(Set(ignored) == ["realtime.provider", "realtime.model"])
        #expect(Self.read("realtime please").1 == ["realtime"])
    }

    @Test func `a realtime create asks for them; a transcription create does not`() throws {
        let choice = TalkRealtimeSelection(provider: "refgw", model: "m", voice: "v")
        let methods = ["talk.session.create", "talk.session.appendAudio"]
        let realtime = try #require(TalkRelayNames.resolve(mode: .realtime, methods: methods))
        let params = realtime.createParams(sessionKey: "main", realtime: choice)
        #expect(params["provider"] == "refgw" && params["model"] == "m" && params["voice"] == "v" && params["brain"] == "agent-consult")
        let transcription = try #require(TalkRelayNames.resolve(mode: .transcription, methods: methods))
        #expect(transcription.createParams(sessionKey: nil, realtime: choice)["model"] == nil)
        let legacy = try #require(TalkRelayNames.resolve(mode: .realtime, methods: ["talk.realtime.session", "talk.realtime.relayAudio"]))
        #expect(legacy.createParams(sessionKey: "main", realtime: choice) == ["sessionKey": "main", "provider": "refgw", "model": "m", "voice": "v"])
    }
}
