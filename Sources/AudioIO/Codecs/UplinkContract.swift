/// The audio a Gateway relay accepts on its input, as its session's `audio` (or `talk.catalog`'s
/// `inputAudioFormats`) states it: an encoding and a sample rate, mono. Never assumed: read per session.
package struct UplinkContract: Sendable, Equatable, Hashable, CustomStringConvertible {
    package enum Encoding: String, Sendable, CaseIterable {
        /// Little-endian 16-bit linear PCM (the realtime relay: 24 kHz).
        case pcm16
        /// ITU-T G.711 µ-law, one byte per sample (the transcription relay: 8 kHz).
        case g711ulaw = "g711_ulaw"
        /// Raw Opus packets of 20 ms, each preceded by its length (2 bytes, big-endian), several per append.
        case opus
    }

    package let encoding: Encoding
    package let sampleRate: Int

    /// Rates each encoding is offered at: G.711 is defined at 8 kHz; Opus at the rates libopus encodes.
    static func supports(_ encoding: Encoding, rate: Int) -> Bool {
        switch encoding {
        case .pcm16: return [8_000, 16_000, 22_050, 24_000, 44_100, 48_000].contains(rate)
        case .g711ulaw: return rate == 8_000
        case .opus: return OpusEncoder.supportedRates.contains(rate)
        }
    }

    /// - Throws: `UplinkContractError` naming the encoding or rate this client cannot send.
    package init(encoding: Encoding, sampleRate: Int) throws(UplinkContractError) {
        guard Self.supports(encoding, rate: sampleRate) else {
            throw .unsupportedRate(encoding: encoding.rawValue, sampleRate: sampleRate)
        }
        self.encoding = encoding
        self.sampleRate = sampleRate
    }

    /// A contract as the Gateway names it (`inputEncoding`, `inputSampleRateHz`).
    package init(encodingName: String, sampleRate: Int) throws(UplinkContractError) {
        guard let encoding = Encoding(rawValue: encodingName) else {
            throw .unsupportedEncoding(String(encodingName.prefix(64)))
        }
        try self.init(encoding: encoding, sampleRate: sampleRate)
    }

    /// What today's realtime relay states.
    package static let pcm16At24k = try! UplinkContract(encoding: .pcm16, sampleRate: 24_000)
    /// What today's transcription relay states.
    package static let muLawAt8k = try! UplinkContract(encoding: .g711ulaw, sampleRate: 8_000)

    /// The best of several offered formats: Opus (a tenth of the bytes), then PCM16, then µ-law; an
    /// offer with nothing usable is an error naming the first format offered.
    package static func choose(from offered: [(encoding: String, sampleRate: Int)]) throws(UplinkContractError) -> UplinkContract {
        var usable: [UplinkContract] = []
        var firstError: UplinkContractError?
        for offer in offered {
            do throws(UplinkContractError) {
                usable.append(try UplinkContract(encodingName: offer.encoding, sampleRate: offer.sampleRate))
            } catch {
                firstError = firstError ?? error
            }
        }
        if let best = usable.min(by: { Self.rank($0.encoding) < Self.rank($1.encoding) }) { return best }
        throw firstError ?? .noFormatOffered
    }

    private static func rank(_ encoding: Encoding) -> Int {
        switch encoding {
        case .opus: 0
        case .pcm16: 1
        case .g711ulaw: 2
        }
    }

    /// Audio payload bytes per second before base64 and JSON framing (Opus: its bitrate plus the
    /// 2-byte length of each of its 50 packets a second).
    package func payloadBytesPerSecond(opusBitrate: Int = UplinkEncoder.defaultOpusBitrate) -> Int {
        switch encoding {
        case .pcm16: sampleRate * 2
        case .g711ulaw: sampleRate
        case .opus: opusBitrate / 8 + 2 * 50
        }
    }

    package var description: String {
        let rate = sampleRate % 1000 == 0 ? "\(sampleRate / 1000) kHz" : "\(Double(sampleRate) / 1000) kHz"
        return "\(encoding.rawValue) \(rate)"
    }
}

/// Why a relay's input contract cannot be met.
package enum UplinkContractError: Error, Equatable, CustomStringConvertible {
    case unsupportedEncoding(String)
    case unsupportedRate(encoding: String, sampleRate: Int)
    case noFormatOffered

    package var description: String {
        switch self {
        case .unsupportedEncoding(let name):
            "The Gateway asks for audio in \"\(name)\", which this client cannot send (it sends pcm16, g711_ulaw or opus)."
        case .unsupportedRate(let name, let rate):
            "The Gateway asks for \(name) audio at \(rate) Hz, which this client cannot send."
        case .noFormatOffered:
            "The Gateway states no input audio format."
        }
    }
}
