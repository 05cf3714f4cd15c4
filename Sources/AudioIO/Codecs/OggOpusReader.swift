import COggOpus
import Foundation

/// Decodes Ogg Opus (a `.opus` file, or an `audio/ogg` clip from the Gateway held in memory) with
/// opusfile into mono 16-bit PCM: at Opus's native 48 kHz, or resampled to the rate asked for.
package enum OggOpusReader {
    /// The rate opusfile always decodes at.
    package static let decodeRate = 48_000

    /// Reads a `.opus` file.
    /// - Throws: `OpusError.oggReader` naming the file when it is missing, not Ogg Opus, or corrupt.
    package static func read(path: String, sampleRate: Int = decodeRate) throws -> PCMBuffer {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw OpusError.oggReader(
                source: "file \(path)",
                code: -128,
                message: (error as NSError).localizedDescription
            )
        }
        return try decode([UInt8](data), source: "file \(path)", sampleRate: sampleRate)
    }

    /// Decodes a whole Ogg Opus stream held in memory. With `maxSeconds`, a stream that decodes to more audio is
    /// refused (`AudioClipError.tooLong`) as soon as it has, before anything is resampled.
    package static func decode(
        _ bytes: [UInt8], source: String = "stream in memory", sampleRate: Int = decodeRate, maxSeconds: Int? = nil
    ) throws -> PCMBuffer {
        if bytes.isEmpty { throw OpusError.oggReader(source: source, code: -132, message: "the data is empty") }
        let samples = try bytes.withUnsafeBufferPointer { buffer -> [Int16] in
            var error: Int32 = 0
            // opusfile reads from the buffer while the handle lives; both end inside this closure.
            guard let file = op_open_memory(buffer.baseAddress, buffer.count, &error), error == 0 else {
                throw OpusError.oggReader(source: source, code: error, message: OpusError.opusfileMessage(error))
            }
            defer { op_free(file) }
            return try readAll(file, source: source, maxSamples: maxSeconds.map { $0 * decodeRate })
        }
        return try PCMBuffer(sampleRate: decodeRate, samples: samples).resampled(to: sampleRate)
    }

    /// Reads every link as stereo (opusfile's down-mix for any channel layout) and averages to mono. Nothing is
    /// sized from the stream's headers (`op_pcm_total` comes from the last page's granule position, which a forged
    /// page sets anywhere up to 2^63): the samples grow as they are decoded, up to `maxSamples`.
    private static func readAll(_ file: OpaquePointer, source: String, maxSamples: Int?) throws -> [Int16] {
        var mono: [Int16] = []
        var stereo = [Int16](repeating: 0, count: 2 * 5760)
        var holes = 0
        while true {
            let count = stereo.withUnsafeMutableBufferPointer { op_read_stereo(file, $0.baseAddress, Int32($0.count)) }
            if count == 0 { return mono }
            if count == -3, holes < 100 {
                // A hole (lost or corrupt pages): skip it and keep the rest, as a player would.
                holes += 1
                continue
            }
            guard count > 0 else {
                throw OpusError.oggReader(source: source, code: count, message: OpusError.opusfileMessage(count))
            }
            if let maxSamples, mono.count + Int(count) > maxSamples {
                throw AudioClipError.tooLong(seconds: maxSamples / decodeRate)
            }
            for i in 0..<Int(count) {
                mono.append(Int16((Int32(stereo[2 * i]) + Int32(stereo[2 * i + 1])) / 2))
            }
        }
    }
}
