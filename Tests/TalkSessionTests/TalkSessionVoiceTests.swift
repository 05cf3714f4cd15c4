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
