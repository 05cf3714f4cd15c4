import Foundation
import Testing
import TalkTestSupport

@testable import AudioIO

/// `EchoExplanation`: the reply's echo alone is explained by its reference frame by frame, whatever its level or
/// envelope; a voice over it is not.
@Suite struct EchoExplanationTests {
    /// Deterministic noise (`SplitMix64.signedUnit`).
    typealias Noise = SplitMix64

    /// Speech-like far end: noise under a syllable envelope (4 per second) with pauses, peak about 8000.
    static func reply(seconds: Double, seed: UInt64) -> [Int16] {
        var noise = Noise(state: seed)
        let count = Int(seconds * 16_000)
        return (0..<count).map { i in
            let t = Double(i) / 16_000
            let syllable = max(0, sin(2 * .pi * 4 * t)) * (Int(t * 1.5) % 4 == 3 ? 0.1 : 1)
            return Int16(8000 * syllable * noise.signedUnit())
        }
    }

    /// The capture: the far end `delayMs` later (60 by default) at `coupling`, plus `near` (the user) and a faint
    /// noise floor.
    static func capture(far: [Int16], coupling: Double, near: [Int16] = [], delayMs: Int = 60) -> [Int16] {
        var noise = Noise(state: 99)
        let delay = delayMs * 16
        return far.indices.map { i in
            let echo = i >= delay ? Double(far[i - delay]) * coupling : 0
            let user = i < near.count ? Double(near[i]) : 0
            return Int16(max(-32_767, min(32_767, echo + user + 20 * noise.signedUnit())))
        }
    }

    static func frames(_ samples: [Int16]) -> [[Int16]] {
        stride(from: 0, to: samples.count - 319, by: 320).map { Array(samples[$0..<$0 + 320]) }
    }

    @Test(arguments: [1.0, 0.3, 0.05])
    func `the reply's echo alone is explained in every audible frame, at any coupling`(coupling: Double) {
        let far = Self.reply(seconds: 20, seed: 1)
        let raw = Self.capture(far: far, coupling: coupling)
        var explanation = EchoExplanation()
        var judged = 0
        for (index, (r, f)) in zip(Self.frames(raw), Self.frames(far)).enumerated() {
            let explained = explanation.add(raw: r, far: f, echoAlone: true)
            guard index >= 25, let explained, AudioLevel.meanSquare(r).squareRoot() >= 1000 * coupling else { continue }
            judged += 1
            #expect(explained >= 0.5, "frame \(index) (\(Double(index) / 50) s) only \(explained) explained")
        }
        #expect(judged > 300)
    }

    @Test func `a voice over the reply's echo is mostly not explained, and nothing is said before the coupling is known or when nothing plays`() {
        // The user from 4 s to 6 s at about the reply's level; the reply is lowered 15 dB for them (reference and
        // echo alike), as the Talk loop does from their first 40 ms.
        let far = Self.reply(seconds: 8, seed: 2).enumerated().map { i, s in (64_000..<96_000).contains(i) ? Int16(Double(s) * 0.18) : s }
        var noise = Noise(state: 3)
        let near = (0..<far.count).map { i -> Int16 in
            let t = Double(i) / 16_000
            return (4..<6).contains(t) ? Int16(4000 * noise.signedUnit()) : 0
        }
        let raw = Self.capture(far: far, coupling: 1, near: near)
        var explanation = EchoExplanation()
        var userFrames = 0
        var unexplained = 0
        for (index, (r, f)) in zip(Self.frames(raw), Self.frames(far)).enumerated() {
            let user = (200..<300).contains(index)
            let explained = explanation.add(raw: r, far: f, echoAlone: !user)
            if index < 5 { #expect(explained == nil, "frame \(index): said \(String(describing: explained)) before the coupling was learnt") }
            // Skip the window's first frames after the user starts (100 ms of capture still mostly echo).
            guard (205..<300).contains(index) else { continue }
            userFrames += 1
            if let explained, explained < 0.5 { unexplained += 1 }
        }
        #expect(unexplained * 10 >= userFrames * 7, "only \(unexplained) of \(userFrames) of the user's frames unexplained")
        var silent = EchoExplanation()
        #expect(silent.add(raw: Array(raw[0..<320]), far: [Int16](repeating: 0, count: 320), echoAlone: true) == nil)
    }

    /// The reply lowered 15 dB from 4 s (reference and echo alike, as the Talk loop lowers it), its echo 10 ms after
    /// its reference (the loopback's placement), and a user from 4.3 s to 6 s 20 dB under the reply's echo at full
    /// level: 5 dB under it lowered.
    static func quietUserUnderLoweredReply(delayMs: Int) -> (raw: [Int16], far: [Int16], user: Range<Int>) {
        let far = Self.reply(seconds: 8, seed: 4).enumerated().map { i, s in i >= 64_000 ? Int16(Double(s) * 0.178) : s }
        var noise = Noise(state: 5)
        let near = (0..<far.count).map { i -> Int16 in
            let t = Double(i) / 16_000
            // About 20 dB under the reply's loudest syllables' RMS at full level.
            return (4.3..<6).contains(t) ? Int16(560 * noise.signedUnit()) : 0
        }
        return (Self.capture(far: far, coupling: 1, near: near, delayMs: delayMs), far, 215..<300)
    }

    @Test func `a user under the lowered reply's echo shows in the close reading between its syllables, where the window explains them whole`() {
        let (raw, far, user) = Self.quietUserUnderLoweredReply(delayMs: 10)
        var explanation = EchoExplanation()
        var windowUnexplained = 0
        var closeRuns = 0
        var run = 0
        for (index, (r, f)) in zip(Self.frames(raw), Self.frames(far)).enumerated() {
            let reading = explanation.read(raw: r, far: f, echoAlone: !user.contains(index) && index < 215)
            guard user.contains(index), AudioLevel.meanSquare(r).squareRoot() >= 150 else { run = 0; continue }
            if let window = reading.window, window < 0.5 { windowUnexplained += 1 }
            run = (reading.frame.map { $0 < 0.5 } ?? false) ? run + 1 : 0
            if run == 3 { closeRuns += 1 }
        }
        // The window's reading: the user's frames explained, but in the reply's pauses (one every 2.7 s).
        #expect(windowUnexplained < 15, "\(windowUnexplained) frames unexplained by the window")
        // Three frames in a row, the barge-in evidence's run, in the gaps between syllables (4 a second).
        #expect(closeRuns >= 4, "only \(closeRuns) runs of three unexplained frames in the close reading")
    }

    @Test(arguments: [0, 10, 20, 60, 140])
    func `the lowered reply's echo alone stays explained in the close reading, wherever the placement leaves it`(delayMs: Int) {
        let far = Self.quietUserUnderLoweredReply(delayMs: delayMs).far
        let echo = Self.capture(far: far, coupling: 1, delayMs: delayMs)
        var explanation = EchoExplanation()
        var judged = 0
        var run = 0
        var longest = 0
        for (index, (r, f)) in zip(Self.frames(echo), Self.frames(far)).enumerated() {
            let reading = explanation.read(raw: r, far: f, echoAlone: true)
            guard index >= 25, AudioLevel.meanSquare(r).squareRoot() >= 150, let close = reading.frame else { run = 0; continue }
            judged += 1
            run = close < 0.5 ? run + 1 : 0
            longest = max(longest, run)
        }
        #expect(judged > 150)
        // No run of three audible frames the close reading leaves unexplained: no user's own sound made of the echo.
        #expect(longest < 3, "\(longest) audible frames of echo in a row unexplained")
    }
}
