import Foundation

/// Reads speech files for the file-as-microphone path: WAV (16-bit PCM or 32-bit float, any rate, any
/// channel count), headerless `.raw`/`.pcm` (16 kHz signed 16-bit little-endian mono, as in
/// pocketsphinx-testdata) or Ogg Opus `.opus`/`.ogg` (such as recorded utterances), mixed down to mono
/// and resampled to the rate asked for.
package enum AudioFileReader {
    /// The sample rate assumed for headerless `.raw` and `.pcm` files.
    package static let rawSampleRate = 16_000

    /// Reads `path` as mono 16-bit PCM at `sampleRate`, or at the file's own rate when `sampleRate` is nil
    /// (48 kHz for Ogg Opus, 16 kHz for raw files).
    /// - Throws: `WAVError` for unreadable or malformed WAV and raw files, `OpusError` for Ogg Opus ones,
    ///   `ResamplerError` if resampling fails.
    package static func readMono(path: String, sampleRate: Int? = AudioFrame.sampleRate) throws -> PCMBuffer {
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        if ext == "opus" || ext == "ogg" {
            return try OggOpusReader.read(path: path, sampleRate: sampleRate ?? 48_000)
        }
        if ext == "raw" || ext == "pcm" {
            return try PCMBuffer(sampleRate: rawSampleRate, samples: readRaw(path: path)).resampled(to: sampleRate ?? rawSampleRate)
        }
        let audio = try WAVAudio.read(path: path)
        // Mix and resample in float so the only rounding to 16 bits happens once, at the end.
        let mono = audio.mixedToMonoFloat()
        let rate = sampleRate ?? audio.sampleRate
        let resampled = rate == audio.sampleRate ? mono : try Resampler.resample(mono, from: audio.sampleRate, to: rate)
        return PCMBuffer(sampleRate: rate, samples: resampled.map(floatToInt16))
    }

    private static func readRaw(path: String) throws -> [Int16] {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw WAVError.unreadable(path: path, reason: (error as NSError).localizedDescription)
        }
        if data.isEmpty { throw WAVError.empty(path: path) }
        if data.count < 2 { throw WAVError.noSamples(path: path) }
        // A trailing odd byte is half a sample: drop it rather than reject a file that is otherwise fine.
        return data.withUnsafeBytes { raw in
            (0..<data.count / 2).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
        }
    }
}

extension WAVAudio {
    /// Channels averaged into one, still as floats in -1...1.
    package func mixedToMonoFloat() -> [Float] {
        if channels == 1 { return samples }
        var out = [Float](repeating: 0, count: frameCount)
        let scale = 1 / Float(channels)
        for i in 0..<frameCount {
            var sum: Float = 0
            for c in 0..<channels { sum += samples[i * channels + c] }
            out[i] = sum * scale
        }
        return out
    }
}
