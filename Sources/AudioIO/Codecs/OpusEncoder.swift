import COpus

/// Encodes mono 16-bit PCM into raw Opus packets, one per 20 ms frame, with libopus.
///
/// Defaults suit speech to the Gateway: VOIP application, 24 kbit/s, complexity 5. With DTX on, frames of
/// silence come out as packets of 1-2 bytes that a sender may skip. With in-band FEC on (and a packet-loss
/// percentage above 0) each packet also carries a low-bitrate copy of the previous frame, which
/// `OpusDecoder.decodeFEC(from:)` recovers when that frame's packet is lost. Not thread-safe: confine it.
package final class OpusEncoder {
    /// What libopus optimises for.
    package enum Application: Sendable, Equatable {
        case voip, audio, restrictedLowDelay

        var code: Int32 {
            switch self {
            case .voip: return OPUS_APPLICATION_VOIP
            case .audio: return OPUS_APPLICATION_AUDIO
            case .restrictedLowDelay: return OPUS_APPLICATION_RESTRICTED_LOWDELAY
            }
        }
    }

    /// Encoder settings; the defaults are the project's speech settings.
    package struct Configuration: Sendable, Equatable {
        package var sampleRate: Int
        package var bitrate: Int
        package var complexity: Int
        package var application: Application
        package var dtx: Bool
        package var inbandFEC: Bool
        /// The loss the encoder should expect (0-100); FEC is only spent when this is above 0.
        package var expectedPacketLossPercent: Int

        package init(
            sampleRate: Int = 16_000,
            bitrate: Int = 24_000,
            complexity: Int = 5,
            application: Application = .voip,
            dtx: Bool = false,
            inbandFEC: Bool = false,
            expectedPacketLossPercent: Int = 0
        ) {
            self.sampleRate = sampleRate
            self.bitrate = bitrate
            self.complexity = complexity
            self.application = application
            self.dtx = dtx
            self.inbandFEC = inbandFEC
            self.expectedPacketLossPercent = expectedPacketLossPercent
        }
    }

    /// Sample rates libopus accepts.
    package static let supportedRates: Set<Int> = [8_000, 12_000, 16_000, 24_000, 48_000]
    /// Largest packet libopus produces for one frame.
    static let maxPacketBytes = 1275

    package let configuration: Configuration
    /// Samples in one 20 ms frame at the configured rate.
    package let frameSize: Int
    /// Samples of algorithmic delay (lookahead): decoded audio lags the input by this much.
    package let lookahead: Int
    private let handle: OpaquePointer

    /// - Throws: `OpusError` for an unsupported rate, an out-of-range setting, or a libopus failure.
    package init(configuration: Configuration = Configuration()) throws {
        guard Self.supportedRates.contains(configuration.sampleRate) else {
            throw OpusError.unsupportedSampleRate(configuration.sampleRate)
        }
        guard (6_000...510_000).contains(configuration.bitrate) else {
            throw OpusError.invalidSetting(name: "bitrate", value: configuration.bitrate)
        }
        guard (0...10).contains(configuration.complexity) else {
            throw OpusError.invalidSetting(name: "complexity", value: configuration.complexity)
        }
        guard (0...100).contains(configuration.expectedPacketLossPercent) else {
            throw OpusError.invalidSetting(name: "packet loss percent", value: configuration.expectedPacketLossPercent)
        }
        var error: Int32 = 0
        guard
            let handle = opus_encoder_create(
                Int32(configuration.sampleRate),
                1,
                configuration.application.code,
                &error
            ),
            error == OPUS_OK
        else { throw OpusError.libopus("create the encoder", error) }
        self.handle = handle
        self.configuration = configuration
        self.frameSize = configuration.sampleRate / 50
        var delay: Int32 = 0
        let settings: [(String, Int32)] = [
            ("set the bitrate", copus_set_bitrate(handle, Int32(configuration.bitrate))),
            ("set the complexity", copus_set_complexity(handle, Int32(configuration.complexity))),
            ("set DTX", copus_set_dtx(handle, configuration.dtx ? 1 : 0)),
            ("set in-band FEC", copus_set_inband_fec(handle, configuration.inbandFEC ? 1 : 0)),
            ("set the packet loss", copus_set_packet_loss_perc(handle, Int32(configuration.expectedPacketLossPercent))),
            ("set the signal type", copus_set_signal(handle, OPUS_SIGNAL_VOICE)),
            ("read the lookahead", copus_get_lookahead(handle, &delay)),
        ]
        self.lookahead = Int(delay)
        if let failed = settings.first(where: { $0.1 != OPUS_OK }) {
            // Every property is set by now, so `deinit` runs on this throw and destroys the handle.
            throw OpusError.libopus(failed.0, failed.1)
        }
    }

    deinit { opus_encoder_destroy(handle) }

    /// Encodes exactly one 20 ms frame (`frameSize` samples) into one packet.
    package func encode(_ frame: [Int16]) throws -> [UInt8] {
        guard frame.count == frameSize else { throw OpusError.wrongFrameSize(expected: frameSize, got: frame.count) }
        var packet = [UInt8](repeating: 0, count: Self.maxPacketBytes)
        let length = frame.withUnsafeBufferPointer { pcm in
            packet.withUnsafeMutableBufferPointer { out in
                guard let input = pcm.baseAddress, let output = out.baseAddress else { return OPUS_BAD_ARG }
                return opus_encode(handle, input, Int32(frameSize), output, Int32(out.count))
            }
        }
        guard length >= 0 else { throw OpusError.libopus("encode a frame", length) }
        return Array(packet.prefix(Int(length)))
    }

    /// Forgets the signal so far (as if newly created, same settings): for a new, unrelated stream.
    package func reset() { _ = copus_reset_encoder(handle) }

    /// True for packets DTX emits during silence (1-2 bytes), which a sender may leave out.
    package static func isDTXPacket(_ packet: [UInt8]) -> Bool { packet.count <= 2 }
}

@available(*, unavailable)
extension OpusEncoder: Sendable {}
