import AudioIO
import Foundation
import SessionBridge
import Testing

@testable import TalkSession

/// Which voice speaks: the Gateway's when `talk.config` names a provider, the local one otherwise and after the
/// Gateway's voice fails.
@Suite struct TalkSessionVoiceTests {
    @Test func `with a provider in talk.config the Gateway's voice speaks each sentence`() async throws {
        let voice = FakeGatewayVoice()
        let rig = try await Rig(agent: .reply("One. Two."), gatewayVoice: voice)
        await rig.session.apply(TalkConfig(provider: "elevenlabs"))
        await rig.listener.utterance("count")
        #expect(await rig.log.waitFor { if case .stateChanged(.speaking, .listening, _) = $0 { true } else { false } })
        #expect(await voice.asked == ["One.", "Two."])
        #expect(rig.synthesizer.synthesised.isEmpty)
        #expect(await rig.speaker.played.map(\.sampleRate) == [24_000, 24_000])
        await rig.session.stop()
    }

    @Test(arguments: [true, false])
    func `a long reply cut off after its first sentence has not asked for the rest`(gateway: Bool) async throws {
        let sentences = (1...12).map { "Sentence number \($0) of a long answer." }
        let voice = FakeGatewayVoice()
        let rig = try await Rig(agent: .reply(sentences.joined(separator: " ")), holdPlayback: true, gatewayVoice: voice)
        if gateway { await rig.session.apply(TalkConfig(provider: "elevenlabs")) }
        await rig.listener.utterance("tell me everything")
        #expect(await rig.log.waitFor { if case .speakingStarted(sentences[0], _) = $0 { true } else { false } })
        try await rig.session.pause()
        await rig.session.stop()
        // At most the sentences whose synthesis had started can have asked, whenever they ran.
        let asked = gateway ? await voice.asked : rig.synthesizer.synthesised
        // The one playing and at most two ahead of it. Each synthesis runs in a task of its own, so on a busy machine
        // the second and third may ask in either order; which were asked is the point, not in what order.
        #expect(asked.count <= 3 && Set(asked).isSubset(of: sentences.prefix(3)) && asked.count == Set(asked).count,
                "synthesis asked for \(asked) of 12 sentences")
        #expect(await rig.speaker.played.count == 1)
    }

    @Test func `a long reply plays every sentence in order, each synthesised ahead of its turn`() async throws {
        let sentences = (1...8).map { "Sentence number \($0)." }
        let voice = FakeGatewayVoice()
        let rig = try await Rig(agent: .reply(sentences.joined(separator: " ")), gatewayVoice: voice)
        await rig.session.apply(TalkConfig(provider: "elevenlabs"))
        await rig.listener.utterance("count")
        #expect(await rig.log.waitFor { if case .stateChanged(.speaking, .listening, _) = $0 { true } else { false } })
        #expect(await voice.asked == sentences)
        let spoken = await rig.log.events.compactMap { if case .speakingStopped(let s, true) = $0.kind { s } else { nil } }
        #expect(spoken == sentences)
        await rig.session.stop()
    }

    @Test func `without a provider the local voice speaks, and a failing Gateway voice falls back with the reason`() async throws {
        let voice = FakeGatewayVoice(failOn: "One")
        let rig = try await Rig(agent: .reply("One. Two."), gatewayVoice: voice)
        await rig.listener.utterance("count")
        #expect(await rig.log.waitFor { if case .stateChanged(.speaking, .listening, _) = $0 { true } else { false } })
        #expect(await voice.asked.isEmpty)
        #expect(rig.synthesizer.synthesised == ["One.", "Two."])

        await rig.session.apply(TalkConfig(provider: "elevenlabs"))
        await rig.listener.utterance("again")
        #expect(await rig.log.waitFor { if case .voiceFallback(let why) = $0 { why.contains("talk_unconfigured") } else { false } })
        #expect(await rig.log.waitFor(times: 2) { if case .stateChanged(.speaking, .listening, _) = $0 { true } else { false } })
        let spoken = await rig.log.count { if case .speakingStopped("One.", true) = $0 { true } else { false } }
        #expect(spoken == 2, "the sentence the Gateway could not speak is spoken locally")
        #expect(rig.synthesizer.synthesised.filter { $0 == "One." }.count == 2)
        await rig.session.stop()
    }
}

/// What `talk.speak` is asked for: `talk.config`'s voice, a reply's directive over it (for this reply with
/// `once`, for the session without).
@Suite struct TalkSessionGatewayVoiceChoiceTests {
    static func replyDone(_ kind: TalkEvent.Kind) -> Bool {
        if case .stateChanged(.speaking, .listening, "reply done") = kind { true } else { false }
    }

    @Test func `a directive's voice reaches the Gateway's voice, over talk.config's`() async throws {
        let voice = FakeGatewayVoice()
        let rig = try await Rig(agent: .reply(#"{"voice":"Rachel","model":"eleven_v3","rate":190,"once":true}"# + "\nHello there."),
                                gatewayVoice: voice)
        await rig.session.apply(TalkConfig(provider: "elevenlabs", voiceId: "config-voice", modelId: "config-model"))
        await rig.listener.utterance("hi")
        #expect(await rig.log.waitFor(Self.replyDone))
        #expect(await voice.voices == [TalkVoiceSettings(voiceId: "Rachel", modelId: "eleven_v3", rateWpm: 190)])
        #expect(await voice.asked == ["Hello there."])

        // `once`: the next reply is in talk.config's voice again.
        await rig.agent.set(.reply("Bye now."))
        await rig.listener.utterance("bye")
        #expect(await rig.log.waitFor(times: 2, Self.replyDone))
        #expect(await voice.voices.last == TalkVoiceSettings(voiceId: "config-voice", modelId: "config-model"))
        await rig.session.stop()
    }

    @Test func `a directive without once keeps its voice for the replies after it`() async throws {
        let voice = FakeGatewayVoice()
        let rig = try await Rig(agent: .reply(#"{"voice":"Adam"}"# + "\nHello there."), gatewayVoice: voice)
        await rig.session.apply(TalkConfig(provider: "elevenlabs", voiceId: "config-voice"))
        await rig.listener.utterance("hi")
        #expect(await rig.log.waitFor(Self.replyDone))
        await rig.agent.set(.reply("Bye now."))
        await rig.listener.utterance("bye")
        #expect(await rig.log.waitFor(times: 2, Self.replyDone))
        // A new talk.config (as on a reconnect) does not undo the directive's choice.
        await rig.session.apply(TalkConfig(provider: "elevenlabs", voiceId: "config-voice", modelId: "config-model"))
        await rig.listener.utterance("bye again")
        #expect(await rig.log.waitFor(times: 3, Self.replyDone))
        #expect(await voice.voices.map(\.voiceId) == ["Adam", "Adam", "Adam"])
        #expect(await voice.voices.last?.modelId == "config-model")
        await rig.session.stop()
    }
}
