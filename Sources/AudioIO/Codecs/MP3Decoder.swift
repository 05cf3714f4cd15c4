import CMpg123

/// Why an MP3 clip could not be decoded.
package enum MP3Error: Error, Equatable, CustomStringConvertible {
    case mpg123(operation: String, message: String)
    case noAudio

    package var description: String {
        switch self {
        case .mpg123(let operation, let message): return "libmpg123 failed to \(operation): \(message)"
        case .noAudio: return "The MP3 clip holds no decodable MPEG audio frames"
        }
    }
}

/// Decodes a whole MP3 clip held in memory with libmpg123 into mono 16-bit PCM at the stream's own rate
/// (ElevenLabs accounts without PCM access get `mp3_44100_128`). Gapless decoding drops the encoder's
/// padding, so the length matches what was spoken.
package enum MP3Decoder {
    /// Refused (`AudioClipError.tooLong`) as soon as it decodes to more than `maxSeconds`.
    package static func decode(_ bytes: [UInt8], maxSeconds: Int = AudioClipDecoder.maxSeconds) throws -> PCMBuffer {
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else {
            throw MP3Error.mpg123(operation: "start", message: String(cString: mpg123_plain_strerror(error)))
        }
        defer { mpg123_delete(handle) }
        try check(cmpg123_param(handle, MPG123_ADD_FLAGS, Int(MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue)), handle, "configure")
        // Mono 16-bit at whatever rate the stream has: libmpg123 mixes stereo down itself.
        try check(mpg123_format_none(handle), handle, "configure")
        var rates: UnsafePointer<Int>?
        var rateCount = 0
        mpg123_rates(&rates, &rateCount)
        for i in 0..<rateCount {
            guard let rate = rates?[i] else { continue }
            try check(mpg123_format(handle, rate, Int32(MPG123_MONO.rawValue), Int32(MPG123_ENC_SIGNED_16.rawValue)), handle, "configure")
        }
        try check(mpg123_open_feed(handle), handle, "open")
        try check(bytes.withUnsafeBufferPointer { mpg123_feed(handle, $0.baseAddress, $0.count) }, handle, "read")

        var samples: [Int16] = []
        var rate = 0
        var chunk = [Int16](repeating: 0, count: 16_384)
        while true {
            var done = 0
            let status = chunk.withUnsafeMutableBytes { mpg123_read(handle, $0.baseAddress, $0.count, &done) }
            samples.append(contentsOf: chunk[0..<(done / 2)])
            if status == MPG123_NEW_FORMAT.rawValue {
                var r = 0
                var channels: Int32 = 0
                var encoding: Int32 = 0
                try check(mpg123_getformat(handle, &r, &channels, &encoding), handle, "read the format")
                rate = r
            } else if status == MPG123_NEED_MORE.rawValue || status == MPG123_DONE.rawValue {
                break
            } else if status != MPG123_OK.rawValue {
                // Trailing garbage after good frames ends the clip; garbage alone is no audio.
                if samples.isEmpty { try check(status, handle, "decode") }
                break
            }
            if rate > 0, samples.count > maxSeconds * rate { throw AudioClipError.tooLong(seconds: maxSeconds) }
        }
        guard rate > 0, !samples.isEmpty else { throw MP3Error.noAudio }
        return PCMBuffer(sampleRate: rate, samples: samples)
    }

    private static func check(_ status: Int32, _ handle: OpaquePointer, _ operation: String) throws {
        guard status != MPG123_OK.rawValue else { return }
        throw MP3Error.mpg123(operation: operation, message: String(cString: mpg123_strerror(handle)))
    }
}
