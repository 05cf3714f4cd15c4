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

    /// The container, decided as upstream's apps do (upstream-gateway.md §3): `outputFormat` first, then `mimeType`,
    /// then `fileExtension`, then the bytes' magic (`OggS`, `RIFF`, `ID3` or an MPEG sync). A label this client does
    /// not know passes the decision on; one it knows it cannot play (µ-law, a-law, `pcm` without a rate, FLAC, WebM
    /// ...) ends it: `.failure` names it, and the local voice speaks. `outputFormat` is the provider's own name:
    /// ElevenLabs' `mp3_44100_128`, `pcm_24000`, `opus_48000_64`; Microsoft/Azure's `audio-24khz-48kbitrate-mono-mp3`,
    /// `riff-24khz-16bit-mono-pcm`, `raw-24khz-16bit-mono-pcm`, `ogg-24khz-16bit-mono-opus`; or a MIME string.
    package static func classify(outputFormat: String?, mimeType: String?, fileExtension: String?, audio: [UInt8])
        -> Result<TalkClipFormat, UnsupportedClipFormat>
    {
        let labels: [(String?, (String) -> Reading)] = [
            (outputFormat, reading(outputFormat:)), (mimeType, reading(mimeType:)), (fileExtension, reading(fileExtension:)),
        ]
        var unknown: String?
        for case let (label?, read) in labels {
            let text = label.trimmingCharacters(in: .whitespaces).lowercased()
            guard !text.isEmpty else { continue }
            switch read(text) {
            case .playable(let format): return .success(format)
            case .unplayable: return .failure(UnsupportedClipFormat(name: String(label.prefix(64))))
            case .unknown: unknown = unknown ?? String(label.prefix(64))
            }
        }
        if audio.starts(with: Array("OggS".utf8)) { return .success(.oggOpus) }
        if audio.starts(with: Array("RIFF".utf8)) { return .success(.wav) }
        if audio.starts(with: Array("ID3".utf8)) || (audio.count > 1 && audio[0] == 0xFF && audio[1] & 0xE0 == 0xE0) {
            return .success(.mp3)
        }
        return .failure(UnsupportedClipFormat(name: unknown ?? "an unnamed format"))
    }

    /// What one label says: a container, one that cannot be played, or nothing this client recognises.
    enum Reading: Equatable {
        case playable(TalkClipFormat)
        case unplayable
        case unknown
    }

    /// A provider's format name (lowercased).
    static func reading(outputFormat f: String) -> Reading {
        if f.contains("/") { return reading(mimeType: f) }
        let parts = f.split(whereSeparator: { $0 == "_" || $0 == "-" }).map(String.init)
        guard let first = parts.first, let last = parts.last else { return .unknown }
        if parts.contains(where: { ["ulaw", "mulaw", "alaw", "g711", "flac", "aac", "amr", "webm", "speex", "silk"].contains($0) }) {
            return .unplayable
        }
        switch first {
        case "pcm":
            // `pcm_24000`: headerless 16-bit little-endian mono; without its rate it cannot be played.
            guard parts.count == 2, let rate = Int(parts[1]), (8_000...192_000).contains(rate) else { return .unplayable }
            return .playable(.pcm(rate: rate))
        case "mp3": return .playable(.mp3)
        case "opus", "ogg": return .playable(.oggOpus)
        case "wav", "riff": return .playable(.wav)   // Azure's riff-…-pcm is a WAV file
        case "raw":
            // Azure's raw-24khz-16bit-mono-pcm: headerless 16-bit PCM at the named rate.
            guard last == "pcm", parts.contains("16bit"), parts.contains("mono"), let rate = sampleRate(parts) else { return .unplayable }
            return .playable(.pcm(rate: rate))
        default: break
        }
        // A container named by the last part (audio-24khz-48kbitrate-mono-mp3), as the Gateway infers a MIME type.
        switch last {
        case "mp3": return .playable(.mp3)
        case "opus", "ogg": return .playable(.oggOpus)
        case "wav": return .playable(.wav)
        default: return .unknown
        }
    }

    /// `24khz`, `22050hz` among a format name's parts.
    private static func sampleRate(_ parts: [String]) -> Int? {
        for part in parts {
            if part.hasSuffix("khz"), let k = Int(part.dropLast(3)) { return (8...192).contains(k) ? k * 1000 : nil }
            if part.hasSuffix("hz"), let hz = Int(part.dropLast(2)) { return (8_000...192_000).contains(hz) ? hz : nil }
        }
        return nil
    }

    static func reading(mimeType: String) -> Reading {
        let mime = mimeType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        switch mime {
        case "audio/ogg", "audio/opus", "application/ogg", "audio/ogg; codecs=opus": return .playable(.oggOpus)
        case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave": return .playable(.wav)
        case "audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mpeg": return .playable(.mp3)
        case "audio/basic", "audio/x-mulaw", "audio/pcmu", "audio/pcma", "audio/flac", "audio/x-flac", "audio/aac",
             "audio/webm", "audio/mp4", "audio/amr":
            return .unplayable
        default: return .unknown
        }
    }

    static func reading(fileExtension ext: String) -> Reading {
        switch ext.trimmingCharacters(in: CharacterSet(charactersIn: ". ")) {
        case "ogg", "opus", "oga": .playable(.oggOpus)
        case "wav", "wave": .playable(.wav)
        case "mp3": .playable(.mp3)
        case "flac", "aac", "m4a", "webm", "ulaw", "alaw", "amr": .unplayable
        default: .unknown
        }
    }
}

/// A clip format this client cannot play, by the name the Gateway gave it.
package struct UnsupportedClipFormat: Error, Sendable, Equatable {
    package var name: String
}
