import AudioIO
import Foundation

/// Signals the benchmarks play or feed (the speech-like one is AudioIO's `SpeechLikeSignal`, which its echo tests use).
package enum TestSignal {
    /// A 440 Hz sine at about half of full scale.
    package static func tone(seconds: Double, rate: Int = 24_000, hz: Double = 440, amplitude: Double = 16_000) -> PCMBuffer {
        let samples = (0..<Int(Double(rate) * seconds)).map { Int16(amplitude * sin(2 * Double.pi * hz * Double($0) / Double(rate))) }
        return PCMBuffer(sampleRate: rate, samples: samples)
    }
}
