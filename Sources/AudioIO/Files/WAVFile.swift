import Foundation

/// What went wrong reading a WAV file; each case says what the file holds and what was expected.
package enum WAVError: Error, Equatable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case empty(path: String)
    case truncatedHeader(path: String, bytes: Int)
    case notRIFFWave(path: String)
    case missingChunk(path: String, chunk: String)
    case unsupportedFormat(path: String, formatTag: Int, bitsPerSample: Int)
    case invalidFormat(path: String, reason: String)
    case sizeMismatch(path: String, declared: Int, available: Int)
    case noSamples(path: String)
    case unwritable(path: String, reason: String)

    package var description: String {
        switch self {
        case .unreadable(let p, let r): return "Cannot read WAV file \(p): \(r)"
        case .empty(let p): return "WAV file \(p) is empty (0 bytes)"
        case .truncatedHeader(let p, let n):
            return "WAV file \(p) is truncated: it ends inside its header, after \(n) bytes"
                + " (a WAV header takes at least 44)"
        case .notRIFFWave(let p): return "\(p) is not a WAV file (no RIFF/WAVE signature)"
        case .missingChunk(let p, let c): return "WAV file \(p) has no '\(c)' chunk"
        case .unsupportedFormat(let p, let tag, let bits):
            return "WAV file \(p) uses format \(tag) with \(bits)-bit samples;"
                + " supported are 16-bit PCM (format 1) and 32-bit float (format 3)"
        case .invalidFormat(let p, let r): return "WAV file \(p) has an invalid format chunk: \(r)"
        case .sizeMismatch(let p, let d, let a):
            return "WAV file \(p) says its audio is \(d) bytes but only \(a) bytes follow (truncated or corrupt)"
        case .noSamples(let p): return "WAV file \(p) holds no audio samples"
        case .unwritable(let p, let r):
            return "Cannot write WAV file \(p): \(r); check the directory exists and is writable"
        }
    }
}

/// Interleaved audio read from or written to a RIFF/WAVE file: 16-bit PCM or 32-bit float, any rate.
package struct WAVAudio: Sendable, Equatable {
    package enum SampleFormat: Sendable, Equatable { case int16, float32 }

    package var sampleRate: Int
    package var channels: Int
    /// Interleaved samples scaled to -1...1 whatever the file held.
    package var samples: [Float]

    package init(sampleRate: Int, channels: Int, samples: [Float]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
    }

    package var frameCount: Int { channels > 0 ? samples.count / channels : 0 }
    package var durationSeconds: Double { sampleRate > 0 ? Double(frameCount) / Double(sampleRate) : 0 }

    /// Channels averaged into one, as 16-bit PCM (clipped, rounded).
    package func mixedToMono() -> PCMBuffer {
        var out = [Int16](repeating: 0, count: frameCount)
        let ch = channels
        for i in 0..<frameCount {
            var sum: Float = 0
            for c in 0..<ch { sum += samples[i * ch + c] }
            out[i] = floatToInt16(sum / Float(ch))
        }
        return PCMBuffer(sampleRate: sampleRate, samples: out)
    }
}

package func floatToInt16(_ v: Float) -> Int16 {
    let scaled = (v * 32768).rounded()
    return Int16(max(-32768, min(32767, scaled)))
}

extension WAVAudio {
    /// Reads a WAV file. Every malformed input gives a `WAVError`, never a crash.
    package static func read(path: String) throws -> WAVAudio {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw WAVError.unreadable(path: path, reason: (error as NSError).localizedDescription)
        }
        return try parse(data, path: path)
    }

    /// With `maxSeconds`, audio longer than that is refused (`AudioClipError.tooLong`) before it is decoded.
    package static func parse(_ data: Data, path: String = "<memory>", maxSeconds: Int? = nil) throws -> WAVAudio {
        let bytes = [UInt8](data)
        if bytes.isEmpty { throw WAVError.empty(path: path) }
        if bytes.count < 12 { throw WAVError.truncatedHeader(path: path, bytes: bytes.count) }
        guard bytes[0..<4] == [0x52, 0x49, 0x46, 0x46][...], bytes[8..<12] == [0x57, 0x41, 0x56, 0x45][...] else {
            throw WAVError.notRIFFWave(path: path)
        }
        var fmt: (tag: Int, channels: Int, rate: Int, bits: Int, blockAlign: Int)?
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = Int(readLE32(bytes, offset + 4))
            let body = offset + 8
            if id == "fmt " {
                guard body + min(max(size, 16), 40) <= bytes.count else {
                    throw WAVError.truncatedHeader(path: path, bytes: bytes.count)
                }
                guard size >= 16 else {
                    throw WAVError.invalidFormat(path: path, reason: "format chunk is \(size) bytes, needs 16")
                }
                var tag = Int(readLE16(bytes, body))
                if tag == 0xFFFE, size >= 40, body + 40 <= bytes.count {
                    // WAVE_FORMAT_EXTENSIBLE: the real format is the sub-format GUID's first two bytes.
                    tag = Int(readLE16(bytes, body + 24))
                }
                fmt = (
                    tag, Int(readLE16(bytes, body + 2)), Int(readLE32(bytes, body + 4)),
                    Int(readLE16(bytes, body + 14)), Int(readLE16(bytes, body + 12))
                )
            } else if id == "data" {
                guard let f = fmt else { throw WAVError.missingChunk(path: path, chunk: "fmt ") }
                try validate(f, path: path)
                let available = bytes.count - body
                if size > available { throw WAVError.sizeMismatch(path: path, declared: size, available: available) }
                let usable = size - size % f.blockAlign
                if usable == 0 { throw WAVError.noSamples(path: path) }
                if let maxSeconds, usable / f.blockAlign > maxSeconds * f.rate { throw AudioClipError.tooLong(seconds: maxSeconds) }
                return WAVAudio(
                    sampleRate: f.rate,
                    channels: f.channels,
                    samples: decode(bytes, from: body, count: usable, float: f.tag == 3)
                )
            }
            offset = body + size + (size & 1)
        }
        if bytes.count < 44 { throw WAVError.truncatedHeader(path: path, bytes: bytes.count) }
        throw WAVError.missingChunk(path: path, chunk: fmt == nil ? "fmt " : "data")
    }

    private static func validate(_ f: (tag: Int, channels: Int, rate: Int, bits: Int, blockAlign: Int), path: String)
        throws
    {
        guard (f.tag == 1 && f.bits == 16) || (f.tag == 3 && f.bits == 32) else {
            throw WAVError.unsupportedFormat(path: path, formatTag: f.tag, bitsPerSample: f.bits)
        }
        guard (1...32).contains(f.channels) else {
            throw WAVError.invalidFormat(path: path, reason: "\(f.channels) channels")
        }
        guard (1000...768_000).contains(f.rate) else {
            throw WAVError.invalidFormat(path: path, reason: "sample rate \(f.rate) Hz")
        }
        guard f.blockAlign == f.channels * f.bits / 8 else {
            throw WAVError.invalidFormat(
                path: path,
                reason: "block align \(f.blockAlign) does not match \(f.channels) × \(f.bits) bits"
            )
        }
    }

    private static func decode(_ b: [UInt8], from start: Int, count: Int, float: Bool) -> [Float] {
        if float {
            return stride(from: start, to: start + count, by: 4).map { Float(bitPattern: readLE32(b, $0)) }
        }
        return stride(from: start, to: start + count, by: 2).map { Float(Int16(bitPattern: readLE16(b, $0))) / 32768 }
    }

    /// Writes the audio as a canonical 44-byte-header WAV file, owner-only (`PrivateFile`).
    package func write(path: String, format: SampleFormat = .int16) throws {
        try PrivateFile.write(encoded(format: format), to: path)
    }

    package func encoded(format: SampleFormat = .int16) -> Data {
        let bytesPerSample = format == .int16 ? 2 : 4
        let dataSize = samples.count * bytesPerSample
        var d = Data(capacity: 44 + dataSize)
        d.append(contentsOf: Array("RIFF".utf8)); appendLE32(&d, UInt32(36 + dataSize))
        d.append(contentsOf: Array("WAVEfmt ".utf8)); appendLE32(&d, 16)
        appendLE16(&d, format == .int16 ? 1 : 3); appendLE16(&d, UInt16(channels))
        appendLE32(&d, UInt32(sampleRate)); appendLE32(&d, UInt32(sampleRate * channels * bytesPerSample))
        appendLE16(&d, UInt16(channels * bytesPerSample)); appendLE16(&d, UInt16(bytesPerSample * 8))
        d.append(contentsOf: Array("data".utf8)); appendLE32(&d, UInt32(dataSize))
        for s in samples {
            if format == .int16 {
                appendLE16(&d, UInt16(bitPattern: floatToInt16(s)))
            } else {
                appendLE32(&d, s.bitPattern)
            }
        }
        return d
    }
}

extension WAVAudio {
    /// Mono 16-bit PCM as a WAV-ready value.
    package init(_ pcm: PCMBuffer) {
        self.init(sampleRate: pcm.sampleRate, channels: 1, samples: pcm.samples.map { Float($0) / 32768 })
    }
}

private func readLE16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
private func readLE32(_ b: [UInt8], _ i: Int) -> UInt32 {
    UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
}
private func appendLE16(_ d: inout Data, _ v: UInt16) { d.append(UInt8(v & 0xff)); d.append(UInt8(v >> 8)) }
private func appendLE32(_ d: inout Data, _ v: UInt32) {
    for s in stride(from: 0, to: 32, by: 8) { d.append(UInt8((v >> UInt32(s)) & 0xff)) }
}
