import Foundation

/// One whole clip from `talk.speak` or `tts.speak`: the decoded bytes and what the Gateway said they are.
/// AudioIO turns it into PCM (`AudioClipDecoder`, given `outputFormat`, `mimeType`, `fileExtension`).
package struct TalkClip: Sendable, Equatable {
    package var audio: [UInt8]
    package var format: TalkClipFormat
    package var outputFormat: String?
    package var mimeType: String?
    package var fileExtension: String?
    package var provider: String
    /// `talk.speak` or `tts.speak`.
    package var method: String
}

/// The clip formats this client can play; anything else is spoken with the local voice.
package enum TalkClipFormat: Sendable, Equatable, CustomStringConvertible {
    /// Headerless 16-bit little-endian mono at this rate (`pcm_24000`).
    case pcm(rate: Int)
    case oggOpus
    case wav
    case mp3

    package var description: String {
        switch self {
        case .pcm(let rate): "pcm_\(rate)"
        case .oggOpus: "Ogg Opus"
        case .wav: "WAV"
        case .mp3: "MP3"
        }
    }

    /// What the Gateway named (outputFormat first, then MIME type, then extension), or the bytes' magic when
    /// it named nothing. `.failure` carries the name of a format we cannot play: `pcm` without a rate, raw,
    /// µ-law and a-law (`talk.speak` has no sample-rate field), FLAC, AAC ...
    package static func classify(outputFormat: String?, mimeType: String?, fileExtension: String?, audio: [UInt8])
        -> Result<TalkClipFormat, UnsupportedClipFormat>
    {
        let format = (outputFormat ?? "").lowercased()
        let mime = (mimeType ?? "").lowercased().split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let ext = (fileExtension ?? "").lowercased().trimmingCharacters(in: CharacterSet(charactersIn: ". "))
        if !format.isEmpty {
            if format.hasPrefix("pcm_"), let rate = Int(format.dropFirst(4).prefix { $0.isNumber }),
               (8_000...192_000).contains(rate), format.dropFirst(4).allSatisfy({ $0.isNumber })
            {
                return .success(.pcm(rate: rate))
            }
            if format.hasPrefix("mp3") { return .success(.mp3) }
            if format.hasPrefix("opus") || format.hasPrefix("ogg") { return .success(.oggOpus) }
            if format.hasPrefix("wav") { return .success(.wav) }
            return .failure(UnsupportedClipFormat(name: String(outputFormat?.prefix(64) ?? "")))
        }
        switch mime {
        case "audio/ogg", "audio/opus": return .success(.oggOpus)
        case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave": return .success(.wav)
        case "audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mpeg": return .success(.mp3)
        case "": break
        default: return .failure(UnsupportedClipFormat(name: String(mime.prefix(64))))
        }
        switch ext {
        case "ogg", "opus", "oga": return .success(.oggOpus)
        case "wav": return .success(.wav)
        case "mp3": return .success(.mp3)
        case "": break
        default: return .failure(UnsupportedClipFormat(name: "." + ext.prefix(16)))
        }
        if audio.starts(with: Array("OggS".utf8)) { return .success(.oggOpus) }
        if audio.starts(with: Array("RIFF".utf8)) { return .success(.wav) }
        if audio.starts(with: Array("ID3".utf8)) || (audio.count > 1 && audio[0] == 0xFF && audio[1] & 0xE0 == 0xE0) {
            return .success(.mp3)
        }
        return .failure(UnsupportedClipFormat(name: "an unnamed format"))
    }
}

/// A clip format this client cannot play, by the name the Gateway gave it.
package struct UnsupportedClipFormat: Error, Sendable, Equatable {
    package var name: String
}
