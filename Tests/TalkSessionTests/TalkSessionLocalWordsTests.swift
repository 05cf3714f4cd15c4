import AudioIO
import Foundation
import Testing

@testable import TalkSession

/// The local words of a barge-in (no transcription relay): the listener decodes the utterance again from the user's
/// onset, with the audio a release would send the relay (`HeldUtteranceRelease`), so the words sent are the user's
/// without the echo's in front and with their first word (`PipelineDecodeAgainTests` for the words themselves).
@Suite struct TalkSessionLocalWordsTests {
    @Test func `a barge-in has the listener decode the utterance again from the user's onset, the linear stage's output around it`() async throws {
        let rig = try await TalkSessionBargeInTests.speaking()
        // Ten quiet frames, then the user: the gate's onset is the first loud frame, 200 ms into the stream.
        try await TalkSessionBargeInTests.speakLoudly(into: rig)
        #expect(await rig.log.waitFor { if case .replyLevel(_, "sound over the reply") = $0 { true } else { false } })
        await rig.listener.hear(.speechStarted(positionMs: 100))
        await rig.listener.hear(.partial("stop right there"))
        #expect(await rig.log.waitFor(TalkSessionBargeInTests.isBargeIn))
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 900, closedAtMs: 1600))
        await rig.listener.hear(.final(ScriptedListener.result("stop right there")))
        #expect(await rig.log.waitFor { if case .transcriptSent("stop right there", _?) = $0 { true } else { false } })
        // Asked while the barge-in's partial was handled, so before the final was heard.
        let asked = await rig.listener.decodedAgain
        try #require(asked.count == 1)
        #expect(asked[0].fromMs == 0)
        func frame(atMs ms: Int) -> AudioFrame {
            var frame = AudioFrame(sequence: UInt64(ms / AudioFrame.durationMs), captureTimeNs: 0,
                                   samples: [Int16](repeating: 1, count: AudioFrame.samplesPerFrame))
            frame.linearSamples = [Int16](repeating: 2, count: AudioFrame.samplesPerFrame)
            return frame
        }
        // The onset's first frame as the linear stage left it; the margin before and the speech well after it cleaned.
        #expect(asked[0].samples(frame(atMs: 200)).first == 2)
        #expect(asked[0].samples(frame(atMs: 0)).first == 1)
        #expect(asked[0].samples(frame(atMs: 600)).first == 1)
        await rig.session.stop()
    }

    @Test func `speech over the reply that does not cut it off is not decoded again`() async throws {
        let rig = try await TalkSessionBargeInTests.speaking()
        await TalkSessionBargeInTests.expectNoInterruption(rig, saying: "and the weather")
        #expect(await rig.listener.decodedAgain.isEmpty)
        await rig.session.stop()
    }
}
