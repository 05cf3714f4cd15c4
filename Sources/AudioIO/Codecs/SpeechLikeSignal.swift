import Foundation

/// A deterministic stand-in for speech when no recording is at hand (benchmarks on a fresh machine):
/// voiced "syllables" (harmonics of a gliding 100-220 Hz pitch with a falling spectral tilt) about four
/// times a second, separated by short pauses, with a little noise, so Opus works as it does on speech.
package enum SpeechLikeSignal {
    /// `seconds` of the signal at `sampleRate`, peaking around -6 dBFS.
    package static func generate(seconds: Double, sampleRate: Int = AudioFrame.sampleRate) -> [Int16] {
        let count = Int(seconds * Double(sampleRate))
        var out = [Int16](repeating: 0, count: count)
        var phase = 0.0
        var noise: UInt32 = 0x1234_5678
        for i in 0..<count {
            let t = Double(i) / Double(sampleRate)
            let syllable = t.truncatingRemainder(dividingBy: 0.25) / 0.25
            // Voiced for the first 70 % of each 250 ms syllable, with a smooth rise and fall.
            let envelope = syllable < 0.7 ? sin(.pi * syllable / 0.7) : 0
            let pitch = 160 + 60 * sin(2 * .pi * 0.7 * t)
            phase += 2 * .pi * pitch / Double(sampleRate)
            var voiced = 0.0
            for harmonic in 1...12 where Double(harmonic) * pitch < Double(sampleRate) / 2 {
                voiced += sin(Double(harmonic) * phase) / Double(harmonic)
            }
            noise = noise &* 1_664_525 &+ 1_013_904_223
            let hiss = (Double(noise >> 8) / Double(1 << 24) - 0.5) * 0.02
            let value = 0.25 * envelope * voiced + hiss
            out[i] = floatToInt16(Float(max(-1, min(1, value))))
        }
        return out
    }
}
