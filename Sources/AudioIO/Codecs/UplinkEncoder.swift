/// One append's worth of encoded audio for a relay: the payload bytes (before base64) and how much audio
/// they hold.
package struct UplinkChunk: Sendable, Equatable {
    package var bytes: [UInt8]
    package var audioMs: Int

    package init(bytes: [UInt8], audioMs: Int) {
        self.bytes = bytes
        self.audioMs = audioMs
    }
}

/// Turns our 16 kHz capture frames into what a relay's `UplinkContract` asks for, in chunks of about
/// `batchMs` of audio: resampled through libsoxr (low-latency recipe) to the contract's rate, then
/// little-endian PCM16, G.711 µ-law, or 20 ms Opus packets each preceded by its 2-byte big-endian length.
///
/// Each utterance ends with `finish()`, which releases what the resampler holds back and pads a last partial
/// Opus frame with silence. Not thread-safe: confine it to its owner (libsoxr and libopus handles).
package final class UplinkEncoder {
    package static let defaultBatchMs = 100
    /// Speech at 24 kbit/s: about a sixteenth of PCM16 at 24 kHz before framing.
    package static let defaultOpusBitrate = 24_000

    package let contract: UplinkContract
    package let batchMs: Int
    private let resampler: Resampler<Int16>?
    private let opus: OpusEncoder?
    /// Samples at the contract rate waiting to fill a 20 ms Opus frame.
    private var opusPending: [Int16] = []
    private var batch: [UInt8] = []
    private var batchSamples = 0
    /// Totals since creation: payload bytes made and input audio consumed, for bytes per second.
    package private(set) var payloadBytes = 0
    package private(set) var inputSamples = 0

    /// - Throws: `ResamplerError` or `OpusError` when libsoxr or libopus refuse the contract.
    package init(contract: UplinkContract, batchMs: Int = defaultBatchMs, opusBitrate: Int = defaultOpusBitrate) throws {
        self.contract = contract
        self.batchMs = max(20, batchMs)
        resampler = contract.sampleRate == AudioFrame.sampleRate
            ? nil : try Resampler<Int16>(from: AudioFrame.sampleRate, to: contract.sampleRate, quality: .lowLatency)
        opus = contract.encoding == .opus
            ? try OpusEncoder(configuration: .init(sampleRate: contract.sampleRate, bitrate: opusBitrate)) : nil
    }

    /// Payload bytes per second of input audio so far (0 before any audio).
    package var measuredBytesPerSecond: Double {
        inputSamples == 0 ? 0 : Double(payloadBytes) * Double(AudioFrame.sampleRate) / Double(inputSamples)
    }

    /// Encodes 16 kHz samples; returns a chunk once `batchMs` of audio has gathered.
    package func append(_ samples: [Int16]) throws -> UplinkChunk? {
        inputSamples += samples.count
        let converted = try resampler?.process(samples) ?? samples
        try encode(converted)
        let batchTarget = contract.sampleRate * batchMs / 1000
        return batchSamples >= batchTarget ? takeBatch() : nil
    }

    /// Ends an utterance: what is still held back, encoded (nil when nothing is left).
    package func finish() throws -> UplinkChunk? {
        if let resampler { try encode(try resampler.flush()) }
        if let opus, !opusPending.isEmpty {
            let padding = opus.frameSize - opusPending.count
            try encode([Int16](repeating: 0, count: padding))
        }
        return batch.isEmpty ? nil : takeBatch()
    }

    private func encode(_ samples: [Int16]) throws {
        guard !samples.isEmpty else { return }
        let before = batch.count
        switch contract.encoding {
        case .pcm16:
            batch.reserveCapacity(batch.count + samples.count * 2)
            for sample in samples {
                let bits = UInt16(bitPattern: sample)
                batch.append(UInt8(truncatingIfNeeded: bits))
                batch.append(UInt8(truncatingIfNeeded: bits >> 8))
            }
            batchSamples += samples.count
        case .g711ulaw:
            batch += MuLaw.encode(samples)
            batchSamples += samples.count
        case .opus:
            guard let opus else { return }
            opusPending += samples
            while opusPending.count >= opus.frameSize {
                let packet = try opus.encode(Array(opusPending.prefix(opus.frameSize)))
                opusPending.removeFirst(opus.frameSize)
                batch += OpusPacketFraming.frame(packet)
                batchSamples += opus.frameSize
            }
        }
        payloadBytes += batch.count - before
    }

    private func takeBatch() -> UplinkChunk {
        let chunk = UplinkChunk(bytes: batch, audioMs: batchSamples * 1000 / contract.sampleRate)
        batch = []
        batchSamples = 0
        return chunk
    }
}

@available(*, unavailable)
extension UplinkEncoder: Sendable {}

/// How several Opus packets share one append: each is preceded by its length, 2 bytes big-endian.
package enum OpusPacketFraming {
    package static func frame(_ packet: [UInt8]) -> [UInt8] {
        [UInt8(packet.count >> 8), UInt8(packet.count & 0xFF)] + packet
    }

    /// The packets in a payload; nil when a length runs past the end (a truncated or foreign payload).
    package static func split(_ bytes: [UInt8]) -> [[UInt8]]? {
        var packets: [[UInt8]] = []
        var index = 0
        while index < bytes.count {
            guard index + 2 <= bytes.count else { return nil }
            let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
            index += 2
            guard index + length <= bytes.count else { return nil }
            packets.append(Array(bytes[index..<index + length]))
            index += length
        }
        return packets
    }
}
