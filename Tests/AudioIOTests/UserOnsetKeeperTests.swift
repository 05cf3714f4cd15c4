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
}
