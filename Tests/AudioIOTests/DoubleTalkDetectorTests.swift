import Foundation
import Testing

@testable import AudioIO

/// When the capture passes the linear stage's output on instead of WebRTC's: only for a user over the echo of
/// a filter that has shown it converged, never for the echo of one still learning the path or thrown off.
@Suite struct DoubleTalkDetectorTests {
    /// A 20 ms frame of noise-like samples at `rms`.
    static func frame(_ rms: Double, seed: Int) -> [Int16] {
        (0..<AudioFrame.samplesPerFrame).map { i in Int16(rms * 1.414 * sin(Double(i * 7 + seed) * 0.9)) }
    }

    /// Feeds `seconds` of frames whose linear output is `ratioDb` under the raw capture; returns how many
    /// frames the detector said the user spoke over the echo. `settling`: the frames are in a sentence's first
    /// second (`ReferenceOnset`).
    static func feed(_ detector: inout DoubleTalkDetector, seconds: Double, ratioDb: Double, playing: Bool = true, settling: Bool = false) -> Int {
        let gain = pow10(ratioDb / 20)
        var said = 0
        for n in 0..<Int(seconds * 50) {
            if detector.add(raw: frame(3_000, seed: n), linear: frame(3_000 * gain, seed: n + 1), playing: playing, settling: settling) { said += 1 }
        }
        return said
    }

    static func pow10(_ x: Double) -> Double { Foundation.pow(10, x) }

    @Test func `the user over a converged filter's echo is heard, the echo alone is not`() {
        var detector = DoubleTalkDetector()
        #expect(Self.feed(&detector, seconds: 2, ratioDb: -20) == 0, "the echo alone was taken for the user")
        // The user 8 dB under the echo: the filter leaves about -8 dB of the capture.
        let heard = Self.feed(&detector, seconds: 1, ratioDb: -8)
        #expect(heard >= 35, "heard the user in only \(heard) of 50 frames")
        // Back to echo alone: the hold ends within 400 ms.
        let after = Self.feed(&detector, seconds: 1, ratioDb: -20)
        #expect(after <= 20, "still said the user spoke \(after) frames after they stopped")
    }

    /// Between a reply's sentences the reference pauses (300 ms on the loopback) and the filter leaves -3 to -15 dB
    /// of the next sentence's echo for up to 800 ms: most of the detector's false openings in 60 recorded sessions.
    @Test func `a sentence's onset after a pause is not taken for the user, the user after it is`() {
        var detector = DoubleTalkDetector()
        _ = Self.feed(&detector, seconds: 2, ratioDb: -20)
        #expect(Self.feed(&detector, seconds: 1, ratioDb: -6, settling: true) == 0, "the onset's leak was taken for the user")
        let heard = Self.feed(&detector, seconds: 1, ratioDb: -8)
        #expect(heard >= 35, "heard the user after the onset in only \(heard) of 50 frames")
    }

    /// A filter converged far (echo alone about -33 dB) still leaves -24 dB of sounds it models less well: 8 dB
    /// over its usual, but no user that could barge in leaves so little.
    @Test func `a well converged filter's harder sounds are not taken for the user`() {
        var detector = DoubleTalkDetector()
        _ = Self.feed(&detector, seconds: 2, ratioDb: -33)
        #expect(Self.feed(&detector, seconds: 0.6, ratioDb: -24) == 0)
        #expect(Self.feed(&detector, seconds: 1, ratioDb: -15) >= 35, "the user at -15 dB was not heard")
    }

    @Test func `a filter still learning the path is never taken for a user`() {
        var detector = DoubleTalkDetector()
        // A reply after silence: the filter removes little at first, then more as it learns.
        #expect(Self.feed(&detector, seconds: 1, ratioDb: -3) == 0)
        #expect(Self.feed(&detector, seconds: 1, ratioDb: -6) == 0)
        #expect(Self.feed(&detector, seconds: 1, ratioDb: -8) == 0)
    }

    @Test func `after a reset or a second of silence the filter must show it converged again`() {
        var detector = DoubleTalkDetector()
        _ = Self.feed(&detector, seconds: 2, ratioDb: -20)
        detector.reset()
        #expect(Self.feed(&detector, seconds: 1, ratioDb: -8) == 0, "a moved reference's echo was taken for the user")
        var quiet = DoubleTalkDetector()
        _ = Self.feed(&quiet, seconds: 2, ratioDb: -20)
        _ = Self.feed(&quiet, seconds: 1.2, ratioDb: -20, playing: false)
        #expect(Self.feed(&quiet, seconds: 1, ratioDb: -8) == 0, "a reply after silence was taken for the user")
    }

    @Test func `a filter thrown off, leaving the capture whole, is not taken for a user`() {
        var detector = DoubleTalkDetector()
        _ = Self.feed(&detector, seconds: 2, ratioDb: -20)
        #expect(Self.feed(&detector, seconds: 1, ratioDb: -0.5) == 0)
    }
}
