import Foundation
import Testing
import TalkTestSupport

@testable import AudioIO

/// The close reading (`EchoExplanation.Reading.frame`) reads each frame against the reference that made its echo,
/// wherever in the canceller's window the placement leaves it: on PulseAudio's loopback 20 ms behind, on PipeWire 40 to
/// 80 ms (`EchoFrameLag`). The realtime gate takes the user's first word from the linear stage's frames it leaves
/// unexplained, and lowers the answer there; the echo alone must not look like that.
@Suite struct EchoFrameLagTests {
    /// Deterministic noise (`SplitMix64.signedUnit`).
    typealias Noise = SplitMix64

    /// A reply of words that stop short, as a voice's do (noise at RMS about 4 600), 400 ms each with 200 ms between:
    /// for a few frames after each word's end its echo is still loud where its reference is silent.
    static func reply(seconds: Double) -> [Int16] {
        var noise = Noise(state: 21)
        return (0..<Int(seconds * 16_000)).map { i in
            let t = Double(i) / 16_000
            let inWord = t.truncatingRemainder(dividingBy: 0.6) < 0.4
            return inWord ? Int16(8_000 * noise.signedUnit()) : 0
        }
    }

    /// The raw capture: the reply `delayMs` later, and a user at RMS about 1 700 over `userSamples`.
    static func capture(_ far: [Int16], delayMs: Int, userSamples: Range<Int> = 0..<0) -> [Int16] {
        var noise = Noise(state: 5)
        let delay = delayMs * 16
        return far.indices.map { i in
            let echo = i >= delay ? Double(far[i - delay]) : 0
            let user = userSamples.contains(i) ? 3_000 * noise.signedUnit() : 0
            return Int16(max(-32_767, min(32_767, echo + user)))
        }
    }

    static func frames(_ samples: [Int16]) -> [[Int16]] {
        stride(from: 0, to: samples.count - 319, by: 320).map { Array(samples[$0..<$0 + 320]) }
    }

    @Test(arguments: [20, 60, 80])
    func `the echo's word ends stay the echo's in the close reading, however far behind its reference it comes`(delayMs: Int) {
        let far = Self.reply(seconds: 12)
        let raw = Self.capture(far, delayMs: delayMs)
        var explanation = EchoExplanation()
        var run = 0
        var runs: [Int] = []
        var judged = 0
        for (index, (r, f)) in zip(Self.frames(raw), Self.frames(far)).enumerated() {
            let close = explanation.read(raw: r, far: f, echoAlone: true).frame
            // The second after the lag is first measured (110 frames in) is left to it.
            guard index >= 160, AudioLevel.meanSquare(r).squareRoot() >= 300, let close else { run = 0; continue }
            judged += 1
            run = close < 0.5 ? run + 1 : 0
            if run == 2 { runs.append(index) }
        }
        #expect(judged > 250)
        // Two such frames in a row are the realtime gate's user's own sound in the linear stage.
        #expect(runs.isEmpty, "echo frames read as someone else's from frames \(runs.prefix(5)) (\(runs.count) runs)")
    }
}
