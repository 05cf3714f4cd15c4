import Foundation
import SessionBridge
import Testing

@testable import TalkSession

/// The relay's hold end to end on fakes: the gate's sound onset, with its place in the capture stream, reaches the
/// machine, and the transcript source hears of an utterance over the reply as held, released from that onset when
/// it cuts the reply off, and dropped without ever streaming when it does not.
@Suite struct TalkSessionRelayHoldTests {
    static let reply = TalkSessionBargeInTests.reply

    static func speaking(_ relay: RecordingTranscriptSource) async throws -> Rig {
        let rig = try await Rig(agent: .reply(reply), holdPlayback: true, transcriptSource: relay)
        await rig.listener.utterance("how is the weather")
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        await rig.agent.set(.reply("Okay."))
        return rig
    }

    @Test func `an utterance over the reply goes to the relay with the barge-in, from the gate's onset`() async throws {
        let relay = RecordingTranscriptSource(words: "stop right there")
        let rig = try await Self.speaking(relay)
        let opening = await relay.calls
        // Ten quiet frames, then the user: the gate's onset is the first loud frame, 200 ms into the stream.
        try await TalkSessionBargeInTests.speakLoudly(into: rig)
        #expect(await rig.log.waitFor { if case .replyLevel(_, "sound over the reply") = $0 { true } else { false } })
        await rig.listener.hear(.speechStarted(positionMs: 100))
        await rig.listener.hear(.partial("stop right there"))
        #expect(await rig.log.waitFor(TalkSessionBargeInTests.isBargeIn))
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 900, closedAtMs: 1600))
        await rig.listener.hear(.final(ScriptedListener.result("stop right there")))
        #expect(await rig.log.waitFor { if case .transcriptSent("stop right there", _?) = $0 { true } else { false } })
        #expect(await relay.calls.dropFirst(opening.count) == ["held", "released from 200", "ended", "transcript"])
        await rig.session.stop()
    }

    @Test func `an utterance over the reply that does not cut it off never streams`() async throws {
        let relay = RecordingTranscriptSource(words: "and the weather")
        let rig = try await Self.speaking(relay)
        let opening = await relay.calls
        await rig.listener.hear(.speechStarted(positionMs: 100))
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 900, closedAtMs: 1600))
        await rig.listener.hear(.final(ScriptedListener.result("the weather")))
        #expect(await rig.log.waitFor { if case .transcriptIgnored = $0 { true } else { false } })
        #expect(await relay.calls.dropFirst(opening.count) == ["held", "discarded"])
        #expect(await rig.agent.sent.count == 1)
        await rig.session.stop()
    }
}
