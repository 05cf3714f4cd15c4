import Foundation
import Testing

@testable import AudioIO

/// A user who starts speaking over the reply keeps their first word's first frames: where the linear stage and
/// WebRTC both keep a frame that stands out and only the suppressor's run rule would turn it down, the linear
/// stage's output passes. Levels as replayed from the recorded barge-ins (`bench aec --replay`): the echo at
/// 3000 RMS, the linear stage leaving -20 dB of it, WebRTC -50 dB; the user's "go" at 2000 RMS under it.
@Suite struct UserOnsetKeeperTests {
    static func frame(_ rms: Double, seed: Int = 0) -> [Int16] {
        (0..<AudioFrame.samplesPerFrame).map { i in Int16(rms * 1.414 * sin(Double(i * 7 + seed) * 0.9)) }
    }

    /// A keeper that has heard 2 s of echo alone (the linear stage leaving -20 dB of it, a little more in some frames).
    static func learnt() -> UserOnsetKeeper {
        var keeper = UserOnsetKeeper()
        for n in 0..<100 {
            let kept = keeper.keep(
                raw: frame(3_000, seed: n), linear: frame(n % 4 == 0 ? 450 : 300, seed: n), cancelled: frame(10, seed: n),
                playing: true, muted: true, userOverEcho: false)
            #expect(!kept)
        }
        return keeper
    }

    /// The frames (of `count`) that pass the linear stage's output when the capture holds, from frame 0, the echo and
    /// what the linear stage leaves at `linearRMS`, WebRTC at `cancelledRMS`; the suppressor opens on the third
    /// frame standing out, as it does (`SuppressorOnsetTests`).
    static func keptFrames(linearRMS: Double, cancelledRMS: Double, count: Int = 10) -> [Int] {
        var keeper = learnt()
        return (0..<count).filter { n in
            keeper.keep(raw: frame(3_500, seed: n), linear: frame(linearRMS, seed: n), cancelled: frame(cancelledRMS, seed: n),
                        playing: true, muted: n < 2, userOverEcho: false)
        }
    }

    @Test func `the user's first frames over the reply pass from the first, the linear stage's for 100 ms`() {
        // Linear stage -5 dB of the raw frame (15 dB over its usual), WebRTC keeping the same.
        #expect(Self.keptFrames(linearRMS: 2_000, cancelledRMS: 1_800) == [0, 1, 2, 3, 4])
    }

    @Test func `a frame WebRTC removed, or one under 10 dB over the linear stage's usual, stays turned down`() {
        // WebRTC left 20 dB less than the linear stage: it took the frame for echo.
        #expect(Self.keptFrames(linearRMS: 2_000, cancelledRMS: 200).isEmpty)
        // 8 dB over what the linear stage usually leaves of the echo alone: the echo's own spread.
        #expect(Self.keptFrames(linearRMS: 800, cancelledRMS: 800).isEmpty)
    }

    @Test func `nothing is kept before 800 ms of echo alone were heard`() {
        var keeper = UserOnsetKeeper()
        let kept = (0..<30).filter { n in
            keeper.keep(
                raw: Self.frame(3_000, seed: n), linear: Self.frame(n < 25 ? 300 : 2_000, seed: n),
                cancelled: Self.frame(n < 25 ? 10 : 2_000, seed: n), playing: true, muted: true, userOverEcho: false)
        }
        #expect(kept.isEmpty)
    }

    /// The user's first frame when WebRTC took it down with the echo: the keeper does not pass it (WebRTC did not keep
    /// it), but it may hold the user's onset, which an utterance's pre-roll takes (`AudioFrame.lookingBack`).
    @Test func `a frame the linear stage keeps 10 dB over its usual but WebRTC took down may hold the user's onset`() {
        var keeper = Self.learnt()
        // The linear stage leaves -5 dB of the raw frame (15 dB over its usual -20 dB); WebRTC leaves 30 dB less.
        let linear = Self.frame(2_000, seed: 1)
        let output = Self.frame(60, seed: 1)
        let kept = keeper.keep(raw: Self.frame(3_500, seed: 1), linear: linear, cancelled: output, playing: true, muted: true, userOverEcho: false)
        #expect(!kept)
        #expect(keeper.mayHoldOnset(output: output, linear: linear))
    }

    @Test func `the echo alone, or a frame the later stages did not turn down, holds no onset`() {
        var keeper = Self.learnt()
        // The echo alone: the linear stage at its usual -20 dB.
        _ = keeper.keep(raw: Self.frame(3_000, seed: 2), linear: Self.frame(300, seed: 2), cancelled: Self.frame(10, seed: 2),
                        playing: true, muted: true, userOverEcho: false)
        #expect(!keeper.mayHoldOnset(output: Self.frame(10, seed: 2), linear: Self.frame(300, seed: 2)))
        // Standing out, but passed at the linear stage's level (under 6 dB down): nothing to look back for.
        _ = keeper.keep(raw: Self.frame(3_500, seed: 3), linear: Self.frame(2_000, seed: 3), cancelled: Self.frame(1_500, seed: 3),
                        playing: true, muted: false, userOverEcho: false)
        #expect(!keeper.mayHoldOnset(output: Self.frame(1_500, seed: 3), linear: Self.frame(2_000, seed: 3)))
        // Nothing playing: nothing judged.
        _ = keeper.keep(raw: Self.frame(3_500, seed: 4), linear: Self.frame(2_000, seed: 4), cancelled: Self.frame(60, seed: 4),
                        playing: false, muted: true, userOverEcho: false)
        #expect(!keeper.mayHoldOnset(output: Self.frame(60, seed: 4), linear: Self.frame(2_000, seed: 4)))
    }
}

