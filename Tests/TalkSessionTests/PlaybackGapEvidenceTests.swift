import AudioIO
import Testing

@testable import TalkSession

/// A playback gap (an underrun: the speaker plays silence the reference does not hold) or a move of the reference
/// leaves the echo off its reference until the placement settles, and the close reading of what the reply explains
/// (the frame against a frame or two of reference) reads its leak as someone else's sound. The shape is a recorded
/// loopback session's (`bench talk --live-stt local`, PulseAudio, the local voice, f37's trial 3): the reply lowered
/// for a sound over it, then 80 ms of the sink's silence, then the echo back 12 ms off its reference, four audible frames
/// its window reading explained whole and its close reading only 8 to 18 %, the lowered echo after. Its words cut the
/// reply a second before the user spoke.
@Suite struct PlaybackGapEvidenceTests {
    static func frame(_ sequence: Int, level: Int16, window: Float?, closely: Float?, settling: Bool) -> AudioFrame {
        var frame = AudioFrame(sequence: UInt64(sequence), captureTimeNs: 0, samples: [Int16](repeating: level, count: 320))
        frame.echoExplained = window
        frame.echoExplainedClosely = closely
        frame.echoSettling = settling
        return frame
    }

    /// The reply's echo, lowered from frame 60 (in the microphone from frame 70); the gap announced at frame 100 (the
    /// settling window: frames 100 to 139), its silence, the leak from frame 104, the lowered echo again. `marked`: the
    /// frames carry the window (false: as before the rule).
    static func gapAndLeak(into meter: inout BargeInEvidenceMeter, marked: Bool) {
        for s in 0..<60 { meter.add(frame(s, level: 3000, window: 1, closely: 1, settling: false)) }
        meter.replyPlays(atGain: 0.056)
        for s in 60..<100 { meter.add(frame(s, level: 200, window: 1, closely: 0.95, settling: false)) }
        for s in 100..<104 { meter.add(frame(s, level: 3, window: 1, closely: 1, settling: marked)) }
        for (s, closely) in zip(104..<108, [Float(0.084), 0.106, 0.179, 0.15]) {
            meter.add(frame(s, level: 280, window: 1, closely: closely, settling: marked))
        }
        for s in 108..<140 { meter.add(frame(s, level: 200, window: 1, closely: 0.95, settling: marked)) }
    }

    /// The loop's judgement on a partial of the utterance that opened on the leak (frame 104), through frame `through`.
    static func stopsReply(_ meter: BargeInEvidenceMeter, through: Int) -> Bool {
        let heard = meter.evidence(ofUtteranceAtMs: 104 * 20, throughMs: (through + 1) * 20)
        let evidence = BargeInEvidence(
            echoExplained: heard.echoExplained, speechMs: (through - 104) * 20,
            startedBeforeReplyAudio: heard.startedBeforeReplyAudio, userSoundShown: heard.userSoundShown)
        return BargeInPolicy().evidence.holdReason(evidence) == nil
    }

    @Test func `the echo's leak after a playback gap does not stop the reply`() {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        Self.gapAndLeak(into: &meter, marked: true)
        #expect(!Self.stopsReply(meter, through: 110))
        #expect(meter.userSound(fromPositionMs: 104 * 20) == .echoOnly)
    }

    /// What the rule is for: unmarked, the same frames are the user's sound and the leak's words cut the reply.
    @Test func `unmarked, the same leak reads as the user's sound`() {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        Self.gapAndLeak(into: &meter, marked: false)
        #expect(Self.stopsReply(meter, through: 110))
    }

    /// A user who starts inside the window over the lowered echo (its window reading explains a few percent of their
    /// frames, as recorded users' read once their sound stood over it) still stops the reply there.
    @Test func `a user clearly over the echo inside the window still stops the reply`() {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        for s in 0..<60 { meter.add(Self.frame(s, level: 3000, window: 1, closely: 1, settling: false)) }
        meter.replyPlays(atGain: 0.056)
        for s in 60..<104 { meter.add(Self.frame(s, level: 200, window: 1, closely: 0.95, settling: s >= 100)) }
        for s in 104..<124 { meter.add(Self.frame(s, level: 2500, window: 0.02, closely: 0.002, settling: true)) }
        #expect(Self.stopsReply(meter, through: 110))
        #expect(meter.userSound(fromPositionMs: 104 * 20) == .from(ms: 104 * 20))
    }

    /// A user whose sound only the close reading tells from the echo (quieter, the window explains it whole) waits
    /// for the window's end, and then stops the reply.
    @Test func `a user after the window stops the reply`() {
        var meter = BargeInEvidenceMeter(audibleRMS: 150)
        Self.gapAndLeak(into: &meter, marked: true)
        for s in 140..<160 { meter.add(Self.frame(s, level: 600, window: 1, closely: 0.03, settling: false)) }
        #expect(Self.stopsReply(meter, through: 159))
        #expect(meter.userSound(fromPositionMs: 104 * 20) == .from(ms: 140 * 20))
    }
}
