import Foundation
import Testing

@testable import AudioIO

/// In a sentence's first second WebRTC has let 5 or 6 frames of echo through in a row on the loopback: the
/// residual echo suppressor then opens only on the 7th frame in a row that stands out, elsewhere on the 3rd.
@Suite struct SuppressorOnsetTests {
    static func frame(_ rms: Double, seed: Int = 0) -> [Int16] {
        (0..<AudioFrame.samplesPerFrame).map { i in Int16(rms * 1.414 * sin(Double(i * 7 + seed) * 0.9)) }
    }

    /// A suppressor that has learnt a canceller leaving -50 dB of a loud echo (2 s of it).
    static func converged() -> ResidualEchoSuppressor {
        var suppressor = ResidualEchoSuppressor()
        for n in 0..<100 {
            _ = suppressor.pass(far: frame(3_000, seed: n), playedAround: 3_000, raw: frame(3_000, seed: n), cleaned: frame(10, seed: n))
        }
        return suppressor
    }

    /// The index of the first of `count` standing-out frames (the user at -10 dB of the echo) passed whole.
    static func firstPassed(settling: Bool, count: Int = 12) -> Int? {
        var suppressor = converged()
        return (0..<count).first { n in
            let cleaned = frame(1_000, seed: n)
            let out = suppressor.pass(far: frame(3_000, seed: n), playedAround: 3_000, raw: frame(3_000, seed: n), cleaned: cleaned, settling: settling)
            return out == cleaned
        }
    }

    @Test func `a sound standing out opens the microphone on its 3rd frame, in a sentence's first second on its 7th`() {
        #expect(Self.firstPassed(settling: false) == 2)
        #expect(Self.firstPassed(settling: true) == 6)
    }
}
