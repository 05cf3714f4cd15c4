import Foundation
import Threading

/// Why a whole audio clip (a Gateway `talk.speak` reply) could not be turned into PCM.
package enum AudioClipError: Error, Equatable, CustomStringConvertible {
    case empty
    /// A format this build cannot decode (MP3, FLAC, µ-law ...), as named by the clip or sniffed from it.
    case unsupportedFormat(String)
    case invalidPCMRate(String)
    /// The clip decodes to more audio than `AudioClipDecoder.maxSeconds`.
    case tooLong(seconds: Int)

    package var description: String {
        switch self {
        case .empty:
            return "The audio clip is empty"
        case .unsupportedFormat(let format):
            return "Cannot play an audio clip in \(format); ask the Gateway for outputFormat pcm_24000, opus or mp3"
        case .invalidPCMRate(let format):
            return "The audio clip format \(format) names no usable sample rate (expected e.g. pcm_24000)"
        case .tooLong(let seconds):
            return "The audio clip decodes to more than \(seconds) s of audio; it was refused"
        }
    }
}

/// Decodes one whole audio clip as the Gateway returns it from `talk.speak` (`audioBase64` with
/// `outputFormat`, `mimeType`, `fileExtension`) into mono PCM for playback: raw `pcm_<rate>` (16-bit
/// little-endian mono), WAV, Ogg Opus (decoded at 48 kHz) or MP3 (libmpg123, at the stream's rate). What
/// the clip says it is wins; when it says nothing, the bytes are sniffed (`OggS`, `RIFF`, `ID3`, an MPEG sync).
package enum AudioClipDecoder {
    /// A clip's container, once its labels were read (SessionBridge's `TalkClipFormat` decides it for `talk.speak`).
    package enum Container: Sendable, Equatable {
        /// Headerless 16-bit little-endian mono at this rate.
        case pcm16(rate: Int)
        case oggOpus
        case wav
        case mp3
    }

    /// The longest clip accepted, in seconds of audio, whatever its format: a hostile Gateway must not make us
    /// decode (and then resample and hold) hours of audio from a few megabytes. A `talk.speak` clip is one
    /// sentence; 10 minutes is far more than any, and at Opus's 48 kHz it is 58 MB of PCM, the most one clip holds.
    package static let maxSeconds = 600

    /// Decodes on a thread of its own (this is CPU-heavy C work, kept off the cooperative pool) and, when
    /// `sampleRate` is given, resamples to it; otherwise the PCM keeps the clip's own rate, which playback takes.
    package static func decodeOffPool(
        _ bytes: [UInt8], outputFormat: String? = nil, mimeType: String? = nil, fileExtension: String? = nil,
        sampleRate: Int? = nil
    ) async throws -> PCMBuffer {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<PCMBuffer, any Error>) in
            NamedThread.start("clip-decode") {
                done.resume(with: Result {
                    let pcm = try decode(bytes, outputFormat: outputFormat, mimeType: mimeType, fileExtension: fileExtension)
                    return try sampleRate.map { try pcm.resampled(to: $0) } ?? pcm
                })
            }
        }
    }

    /// A clip whose container is known, on a thread of its own; resampled to `sampleRate` when given.
    package static func decodeOffPool(_ bytes: [UInt8], container: Container, sampleRate: Int? = nil) async throws -> PCMBuffer {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<PCMBuffer, any Error>) in
            NamedThread.start("clip-decode") {
                done.resume(with: Result {
                    let pcm = try decode(bytes, container: container)
                    return try sampleRate.map { try pcm.resampled(to: $0) } ?? pcm
                })
            }
        }
    }

    /// A clip whose container is known, held to `maxSeconds` as it is decoded.
    package static func decode(_ bytes: [UInt8], container: Container) throws -> PCMBuffer {
        if bytes.isEmpty { throw AudioClipError.empty }
        switch container {
        case .pcm16(let rate): return try rawPCM(bytes, format: "pcm_\(rate)")
        case .oggOpus: return try OggOpusReader.decode(bytes, source: "audio clip (Ogg)", maxSeconds: maxSeconds)
        case .wav: return try WAVAudio.parse(Data(bytes), path: "audio clip", maxSeconds: maxSeconds).mixedToMono()
        case .mp3: return try MP3Decoder.decode(bytes, maxSeconds: maxSeconds)
        }
    }

    /// Every format is held to `maxSeconds` as it is decoded, before anything is resampled.
    /// - Throws: `AudioClipError` for empty, unsupported or too long clips, `WAVError`, `OpusError` or `MP3Error` for
    ///   broken ones.
    package static func decode(
        _ bytes: [UInt8],
        outputFormat: String? = nil,
        mimeType: String? = nil,
        fileExtension: String? = nil
    ) throws -> PCMBuffer {
        if bytes.isEmpty { throw AudioClipError.empty }
        let format = outputFormat?.lowercased() ?? ""
        let mime = mimeType?.lowercased().split(separator: ";").first.map(String.init) ?? ""
        let ext = fileExtension?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: ".")) ?? ""

        if format.hasPrefix("pcm") {
            return try rawPCM(bytes, format: format)
        }
        if mime == "audio/ogg" || mime == "audio/opus" || ["ogg", "opus", "oga"].contains(ext)
            || format.hasPrefix("opus")
            || bytes.starts(with: Array("OggS".utf8))
        {
            return try OggOpusReader.decode(bytes, source: "audio clip (\(mime.isEmpty ? "Ogg" : mime))", maxSeconds: maxSeconds)
        }
        if ["audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"].contains(mime) || ext == "wav"
            || format.hasPrefix("wav") || bytes.starts(with: Array("RIFF".utf8))
        {
            return try WAVAudio.parse(Data(bytes), path: "audio clip", maxSeconds: maxSeconds).mixedToMono()
        }
        if ["audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mpeg"].contains(mime) || ext == "mp3"
            || format.hasPrefix("mp3") || (format.isEmpty && mime.isEmpty && ext.isEmpty && looksLikeMP3(bytes))
        {
            return try MP3Decoder.decode(bytes, maxSeconds: maxSeconds)
        }
        let named = [outputFormat, mimeType, fileExtension].compactMap { $0 }.first
        throw AudioClipError.unsupportedFormat(named ?? sniffedName(bytes))
    }

    /// `pcm_24000` and the like: headerless 16-bit little-endian mono at the named rate.
    private static func rawPCM(_ bytes: [UInt8], format: String) throws -> PCMBuffer {
        guard let rate = format.split(separator: "_").last.flatMap({ Int($0) }), (8_000...192_000).contains(rate) else {
            throw AudioClipError.invalidPCMRate(format)
        }
        guard bytes.count / 2 <= maxSeconds * rate else { throw AudioClipError.tooLong(seconds: maxSeconds) }
        let samples = bytes.withUnsafeBytes { raw in
            (0..<bytes.count / 2).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
        }
        return PCMBuffer(sampleRate: rate, samples: samples)
    }

    private static func looksLikeMP3(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: Array("ID3".utf8)) || (bytes.count > 1 && bytes[0] == 0xFF && bytes[1] & 0xE0 == 0xE0)
    }

    private static func sniffedName(_ bytes: [UInt8]) -> String {
        if bytes.starts(with: Array("fLaC".utf8)) { return "FLAC" }
        return "an unknown format"
    }
}
