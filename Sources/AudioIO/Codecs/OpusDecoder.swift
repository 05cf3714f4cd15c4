import COpus

/// Decodes raw Opus packets to mono 16-bit PCM, 20 ms at a time, and fills gaps when packets are lost:
/// `decodeMissing()` conceals a lost frame (PLC, extrapolated from what came before), and
/// `decodeFEC(from:)` rebuilds it from the redundancy carried in the next packet when the encoder had
/// in-band FEC on. Not thread-safe: confine it to its owner.
package final class OpusDecoder {
    package let sampleRate: Int
    /// Samples in one 20 ms frame.
    package let frameSize: Int
    private let handle: OpaquePointer

    /// - Throws: `OpusError` for an unsupported rate or a libopus failure.
    package init(sampleRate: Int = 16_000) throws {
        guard OpusEncoder.supportedRates.contains(sampleRate) else { throw OpusError.unsupportedSampleRate(sampleRate) }
        var error: Int32 = 0
        guard let handle = opus_decoder_create(Int32(sampleRate), 1, &error), error == OPUS_OK else {
            throw OpusError.libopus("create the decoder", error)
        }
        self.handle = handle
        self.sampleRate = sampleRate
        self.frameSize = sampleRate / 50
    }

    deinit { opus_decoder_destroy(handle) }

    /// Decodes one packet (up to 120 ms of audio, normally one 20 ms frame).
    package func decode(_ packet: [UInt8]) throws -> [Int16] {
        guard !packet.isEmpty else { return try decodeMissing() }
        return try run(packet, maxSamples: frameSize * 6, fec: false, operation: "decode a packet")
    }

    /// Packet-loss concealment: a plausible 20 ms continuing the audio before the lost packet.
    package func decodeMissing() throws -> [Int16] {
        try run(nil, maxSamples: frameSize, fec: false, operation: "conceal a lost packet")
    }

    /// Rebuilds the frame lost just before `nextPacket` from the FEC data inside it (falling back to
    /// concealment inside libopus when the packet carries none). Then decode `nextPacket` itself as usual.
    package func decodeFEC(from nextPacket: [UInt8]) throws -> [Int16] {
        try run(nextPacket, maxSamples: frameSize, fec: true, operation: "recover a lost packet from FEC")
    }

    /// Forgets the stream so far, for a new, unrelated stream.
    package func reset() { _ = copus_reset_decoder(handle) }

    private func run(_ packet: [UInt8]?, maxSamples: Int, fec: Bool, operation: String) throws -> [Int16] {
        var pcm = [Int16](repeating: 0, count: maxSamples)
        let decoded = pcm.withUnsafeMutableBufferPointer { out -> Int32 in
            guard let output = out.baseAddress else { return OPUS_BAD_ARG }
            guard let packet else { return opus_decode(handle, nil, 0, output, Int32(maxSamples), 0) }
            return packet.withUnsafeBufferPointer { data in
                opus_decode(handle, data.baseAddress, Int32(data.count), output, Int32(maxSamples), fec ? 1 : 0)
            }
        }
        guard decoded >= 0 else { throw OpusError.libopus(operation, decoded) }
        return Array(pcm.prefix(Int(decoded)))
    }
}

@available(*, unavailable)
extension OpusDecoder: Sendable {}
