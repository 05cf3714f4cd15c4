import AudioIO
import Foundation
import TalkTestSupport

/// Real speech from Debian's pocketsphinx-testdata and generated silence and noise, assembled into clips
/// whose speech boundaries are known.
enum SpeechTestAudio {
    static let testData = "/usr/share/pocketsphinx/test/data"
    static let goForward = testData + "/goforward.raw"
    static func cards(_ n: Int) -> String { testData + "/cards/00\(n).wav" }
    static let librivox0930 = testData + "/librivox/sense_and_sensibility_01_austen_64kb-0930.wav"
    static let librivox0870 = testData + "/librivox/sense_and_sensibility_01_austen_64kb-0870.wav"

    static func load(_ path: String) throws -> [Int16] { try AudioFileReader.readMono(path: path).samples }

    /// The stretch of a clean recording between its first and last sample above 10 % of its peak: the
    /// clip's speech, with its own leading and trailing silence cut off.
    static func speech(_ path: String) throws -> [Int16] {
        let s = try load(path)
        let peak = s.map { abs(Int($0)) }.max() ?? 0
        let limit = peak / 10
        guard let a = s.firstIndex(where: { abs(Int($0)) > limit }),
              let b = s.lastIndex(where: { abs(Int($0)) > limit }) else { return s }
        return Array(s[a...b])
    }

    /// Gaussian noise at `dbfs` RMS (digital silence below -99), deterministic for a given seed.
    static func noise(ms: Int, dbfs: Double, seed: UInt64 = 1) -> [Int16] {
        let count = ms * 16
        guard dbfs > -99 else { return [Int16](repeating: 0, count: count) }
        var rng = SplitMix64(state: seed)
        let sigma = pow(10, dbfs / 20) * 32768
        return (0..<count).map { _ in
            let u1 = max(rng.unit(), 1e-12), u2 = rng.unit()
            let g = (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
            return Int16(max(-32768, min(32767, (g * sigma).rounded())))
        }
    }

    /// Adds `b` onto `a` sample by sample (clipped), `b` repeated or cut to `a`'s length.
    static func mix(_ a: [Int16], _ b: [Int16]) -> [Int16] {
        guard !b.isEmpty else { return a }
        return a.indices.map { Int16(max(-32768, min(32767, Int($0 < a.count ? a[$0] : 0) + Int(b[$0 % b.count])))) }
    }

    /// Scales by `gain` (clipping at full scale) and shifts by `offset`.
    static func distort(_ s: [Int16], gain: Double, offset: Int) -> [Int16] {
        s.map { Int16(max(-32768, min(32767, (Double($0) * gain).rounded() + Double(offset)))) }
    }

    static func frames(_ samples: [Int16], startTimeNs: UInt64 = 0) -> [AudioFrame] {
        let n = AudioFrame.samplesPerFrame
        return stride(from: 0, to: samples.count, by: n).enumerated().map { index, start in
            var chunk = Array(samples[start..<min(start + n, samples.count)])
            chunk += [Int16](repeating: 0, count: n - chunk.count)
            return AudioFrame(sequence: UInt64(index), captureTimeNs: startTimeNs + UInt64(index + 1) * 20_000_000, samples: chunk)
        }
    }

    /// Writes 16 kHz mono PCM to a new temporary WAV file and returns its path.
    static func writeTemporaryWAV(_ samples: [Int16], name: String = "clip") throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("openclaw-talk-\(name)-\(UUID().uuidString).wav").path
        try WAVAudio(PCMBuffer(sampleRate: 16_000, samples: samples)).write(path: path)
        return path
    }
}

/// A clip built from pieces, remembering where each speech piece lies.
struct PaddedClip {
    var samples: [Int16] = []
    /// Start and end of each speech piece, in milliseconds.
    var speech: [(startMs: Int, endMs: Int)] = []

    mutating func addSilence(ms: Int) { samples += [Int16](repeating: 0, count: ms * 16) }

    mutating func addSpeech(_ s: [Int16]) {
        let start = samples.count / 16
        samples += s
        speech.append((start, samples.count / 16))
    }

    /// The clip with background noise at `dbfs` added throughout.
    func withNoise(dbfs: Double, seed: UInt64 = 7) -> [Int16] {
        SpeechTestAudio.mix(samples, SpeechTestAudio.noise(ms: samples.count / 16 + 1, dbfs: dbfs, seed: seed))
    }
}
