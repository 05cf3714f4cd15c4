import Foundation
import Testing
import TalkTestSupport

@testable import AudioIO
@testable import TalkSession

/// A user about 20 dB under the reply's echo (a metre from speakers at full level; `bench talk --user-gain-db -12`)
/// speaking over a stretch of the reply with no pause between its syllables: the Talk loop lowers the reply
/// (`BargeInPolicy.Lowering`) and barge-in's evidence, frame by frame against the reply's reference
/// (`EchoExplanation` through `BargeInEvidenceMeter`), must show their sound as theirs once the lowered reply is in the
/// microphone, not only in the reply's next pause.
@Suite struct QuietUserLoweringTests {
    static let rate = AudioFrame.sampleRate
    static let frameSamples = AudioFrame.samplesPerFrame
    /// The user starts here (frame), and the sound onset lowers the reply two frames (40 ms) later.
    static let userFrame = 150
    static let loweredFrame = userFrame + 2
    /// The bound: the lowering's reach into the microphone (10 frames: the sink's buffer and the server's latency), the
    /// run of the user's own sound, and two frames more.
    static let decidedWithin = 10 + BargeInEvidenceMeter.userRunFrames + 2
    /// In the paused session the reply is silent for six frames (120 ms, a pause between its words) from here.
    static let pauseFrame = 150
    static let pauseFrames = 6

    /// Deterministic noise (`SplitMix64.signedUnit`).
    typealias Noise = SplitMix64

    /// Frames of the session: the reply (speech-like noise, its syllables 4 a second never falling under 20 % of its
    /// peak: a stretch with no gap), lowered by `gain` from `loweredFrame`, reference and echo alike; its echo in the
    /// raw capture one frame (20 ms) later, as on the loopback; the user, if any, 20 dB under the echo at full level
    /// from `userFrame`. What the echo stages pass (the frame's samples) is the user and a tenth of the echo's energy.
    /// With `paused`, the reply is silent for `pauseFrames` from `pauseFrame`, the user starts under its echo 8 frames
    /// before that, and the reply is lowered from `lowered` (the frame the caller's sound onset lowers it at).
    static func session(gain: Float, user: Bool, paused: Bool = false, lowered: Int = loweredFrame) -> [AudioFrame] {
        var replyNoise = Noise(state: 7)
        var userNoise = Noise(state: 11)
        let frames = 260
        let userFrame = paused ? pauseFrame - 8 : userFrame
        let pause = paused ? pauseFrame * frameSamples..<(pauseFrame + pauseFrames) * frameSamples : 0..<0
        let far: [Double] = (0..<frames * frameSamples).map { i in
            let t = Double(i) / Double(rate)
            let level = i >= lowered * frameSamples ? Double(gain) : 1
            let sound = 8000 * (0.6 + 0.4 * sin(2 * .pi * 4 * t)) * replyNoise.signedUnit() * level
            return pause.contains(i) ? 0 : sound
        }
        let delay = frameSamples
        let echo = far.indices.map { $0 >= delay ? far[$0 - delay] : 0 }
        let echoRMS = (echo.prefix(userFrame * frameSamples).map { $0 * $0 }.reduce(0, +) / Double(userFrame * frameSamples)).squareRoot()
        let near: [Double] = far.indices.map { i in
            user && i >= userFrame * frameSamples ? echoRMS / 10 * 3.0.squareRoot() * userNoise.signedUnit() : 0
        }
        var explanation = EchoExplanation()
        return (0..<frames).map { f in
            let range = f * frameSamples..<(f + 1) * frameSamples
            let raw = range.map { Int16(clamping: Int((echo[$0] + near[$0]).rounded())) }
            let reference = range.map { Int16(clamping: Int(far[$0].rounded())) }
            let reading = explanation.read(raw: raw, far: reference, echoAlone: f < userFrame)
            var frame = AudioFrame(sequence: UInt64(f), captureTimeNs: 0,
                                   samples: range.map { Int16(clamping: Int((near[$0] + echo[$0] * 0.316).rounded())) })
            frame.echoExplained = reading.window.map(Float.init)
            frame.echoExplainedClosely = reading.frame.map(Float.init)
            return frame
        }
    }

    /// The barge-in evidence of the utterance that opened at the user's onset, through frame `through`, with the
    /// reply lowered at `loweredFrame` as the loop tells the gate.
    static func evidence(
        _ frames: [AudioFrame], gain: Float, through: Int, lowered: Int = loweredFrame, userFrame: Int = userFrame
    ) -> BargeInEvidence {
        var meter = BargeInEvidenceMeter(audibleRMS: BargeInPolicy.EnergyGuard().minimumRMS)
        for frame in frames.prefix(through + 1) {
            if frame.sequence == UInt64(lowered) { meter.replyPlays(atGain: gain) }
            meter.add(frame)
        }
        let read = meter.evidence(ofUtteranceAtMs: userFrame * AudioFrame.durationMs, throughMs: (through + 1) * AudioFrame.durationMs)
        return BargeInEvidence(echoExplained: read.echoExplained, speechMs: 500, startedBeforeReplyAudio: read.startedBeforeReplyAudio,
                               userSoundShown: read.userSoundShown)
    }

    @Test func `a user 20 dB under the echo, over a stretch of the reply with no pause, is theirs once the lowered reply is in the microphone`() throws {
        let policy = BargeInPolicy()
        let gain = try #require(policy.lowering.gain)
        let through = Self.loweredFrame + Self.decidedWithin
        let user = Self.evidence(Self.session(gain: gain, user: true), gain: gain, through: through)
        #expect(user.userSoundShown == true, "no run of the user's own sound \(Self.decidedWithin) frames after the lowering")
        #expect(policy.evidence.holdReason(user) == nil, "held: \(policy.evidence.holdReason(user) ?? "")")
        // The reply's echo alone, lowered alike, stays the echo's through the same frames and long after.
        for end in [through, 259] {
            let echo = Self.evidence(Self.session(gain: gain, user: false), gain: gain, through: end)
            #expect(echo.userSoundShown == false && policy.evidence.holdReason(echo) != nil, "the echo alone read as the user's through frame \(end)")
        }
    }

    /// The quiet user's commonest slow barge-in (`bench talk --user-gain-db -12`): their first word is lost under the
    /// echo at its level, their next one begins in a short pause between the reply's words and makes the sound onset
    /// that lowers the reply. The window's reading (260 ms of reference) explains those frames whole; the close one
    /// leaves them to the user, and by the pause's end the evidence must say so, not only once the lowered reply is in
    /// the microphone and its syllables leave them a gap.
    @Test func `a quiet user's word in a pause of the reply, which lowered it, is theirs by the pause's end`() throws {
        let policy = BargeInPolicy()
        let gain = try #require(policy.lowering.gain)
        // The echo comes a frame after its reference: the pause reaches the microphone a frame late, where the user's
        // word alone makes the gate's sound onset; the gate lowers the reply on its second loud frame.
        let lowered = Self.pauseFrame + 1 + SpeechEnergy.onsetFrames
        // The pause in the microphone: its frames from the lowering on, the last one read against the reply again.
        let through = Self.pauseFrame + Self.pauseFrames
        let frames = Self.session(gain: gain, user: true, paused: true, lowered: lowered)
        let user = Self.evidence(frames, gain: gain, through: through, lowered: lowered, userFrame: Self.pauseFrame - 8)
        #expect(user.userSoundShown == true, "no run of the user's own sound by the end of the reply's pause")
        #expect(policy.evidence.holdReason(user) == nil, "held: \(policy.evidence.holdReason(user) ?? "")")
        // The reply's echo alone, paused and lowered alike, stays the echo's through the pause and long after.
        for end in [through, 259] {
            let echo = Self.evidence(Self.session(gain: gain, user: false, paused: true, lowered: lowered), gain: gain, through: end,
                                     lowered: lowered, userFrame: Self.pauseFrame - 8)
            #expect(echo.userSoundShown == false && policy.evidence.holdReason(echo) != nil, "the echo alone read as the user's through frame \(end)")
        }
    }
}
