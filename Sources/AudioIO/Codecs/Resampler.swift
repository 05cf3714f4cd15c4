import CSoxr

/// A sample type libsoxr reads and writes directly: 16-bit PCM or 32-bit float, mono.
package protocol ResamplerSample: Sendable, Numeric {
    static var soxrType: soxr_datatype_t { get }
}

extension Int16: ResamplerSample {
    package static var soxrType: soxr_datatype_t { SOXR_INT16_I }
}

extension Float: ResamplerSample {
    package static var soxrType: soxr_datatype_t { SOXR_FLOAT32_I }
}

/// What went wrong creating or running a resampler.
package enum ResamplerError: Error, Equatable, CustomStringConvertible {
    case unsupportedRate(Int)
    case soxr(operation: String, message: String)

    package var description: String {
        switch self {
        case .unsupportedRate(let rate):
            return "Cannot resample at \(rate) Hz: rates must be between 1000 and 768000 Hz"
        case .soxr(let operation, let message):
            return "libsoxr failed to \(operation): \(message)"
        }
    }
}

/// Converts mono audio between sample rates with libsoxr, at "high quality" for files or at low latency
/// for live streams (see `Quality`); both are transparent for 16-bit speech and cost well under 1 % of a core.
///
/// Streaming: feed chunks to `process(_:)` as they come and call `flush()` once at the end; the output of
/// all calls together is the whole signal (about `count * outputRate / inputRate` samples). Output lags
/// input by the filter's delay, which `flush()` releases. Not thread-safe: confine it to its owner.
package final class Resampler<Sample: ResamplerSample> {
    /// The trade between filter quality and the delay a streaming resampler adds.
    package enum Quality: Sendable, Equatable {
        /// soxr's "high quality" (20-bit): for files and one-shot conversions. Streamed in 20 ms chunks it
        /// holds back about 16 ms at 48 <-> 16 kHz, 14 ms at 22.05 -> 48 kHz, 27-31 ms at 2:1 and 44.1 -> 16 kHz.
        case high
        /// soxr's 16-bit recipe with a minimum-phase filter, still transparent for 16-bit speech, for live
        /// capture and playback: about 3 ms at 48 <-> 16 kHz and 6 ms at 22.05 or 44.1 -> 48 kHz, but
        /// about 20 ms at 2:1 and 44.1 -> 16 kHz (linear phase would hold back 36 ms at 48 -> 16 kHz).
        case lowLatency

        var recipe: UInt {
            switch self {
            case .high: return UInt(SOXR_20_BITQ)
            case .lowLatency: return UInt(SOXR_16_BITQ) | UInt(SOXR_MINIMUM_PHASE)
            }
        }
    }

    package let inputRate: Int
    package let outputRate: Int
    package let quality: Quality
    private let handle: soxr_t?

    /// - Throws: `ResamplerError` when a rate is out of range or libsoxr refuses the configuration.
    package init(from inputRate: Int, to outputRate: Int, quality: Quality = .high) throws {
        for rate in [inputRate, outputRate] where !(1000...768_000).contains(rate) {
            throw ResamplerError.unsupportedRate(rate)
        }
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.quality = quality
        if inputRate == outputRate {
            handle = nil
            return
        }
        var io = soxr_io_spec(Sample.soxrType, Sample.soxrType)
        // Dither would add noise to digital silence; 16-bit speech does not need it.
        io.flags |= UInt(SOXR_NO_DITHER)
        var spec = soxr_quality_spec(quality.recipe, 0)
        var runtime = soxr_runtime_spec(1)
        var error: soxr_error_t?
        let created = soxr_create(Double(inputRate), Double(outputRate), 1, &error, &io, &spec, &runtime)
        if let error {
            if let created { soxr_delete(created) }
            throw ResamplerError.soxr(operation: "start", message: String(cString: error))
        }
        guard let created else { throw ResamplerError.soxr(operation: "start", message: "no resampler returned") }
        handle = created
    }

    deinit {
        if let handle { soxr_delete(handle) }
    }

    /// Output samples the filter currently holds back (its latency, in output samples).
    package var delay: Double {
        guard let handle else { return 0 }
        return soxr_delay(handle)
    }

    /// Resamples one chunk; returns what the filter has ready (possibly less than the chunk's share).
    package func process(_ samples: [Sample]) throws -> [Sample] {
        guard let handle else { return samples }
        if samples.isEmpty { return [] }
        return try run(handle, input: samples)
    }

    /// Ends the stream: returns the samples still held in the filter, and readies it for a new signal.
    package func flush() throws -> [Sample] {
        guard let handle else { return [] }
        let tail = try run(handle, input: nil)
        soxr_clear(handle)
        return tail
    }

    /// Resamples a whole signal at once.
    package static func resample(
        _ samples: [Sample], from inputRate: Int, to outputRate: Int, quality: Quality = .high
    ) throws -> [Sample] {
        let resampler = try Resampler(from: inputRate, to: outputRate, quality: quality)
        return try resampler.process(samples) + resampler.flush()
    }

    private func run(_ handle: soxr_t, input: [Sample]?) throws -> [Sample] {
        let ratio = Double(outputRate) / Double(inputRate)
        let capacity = Int((Double(input?.count ?? 0) * ratio).rounded(.up)) + 1024
        var output: [Sample] = []
        var chunk = [Sample](repeating: 0, count: capacity)
        var consumed = 0
        // soxr may need several calls to hand over everything: loop until it produces nothing more.
        while true {
            var inputDone = 0
            var outputDone = 0
            let error: soxr_error_t? = chunk.withUnsafeMutableBytes { out in
                if let input {
                    return input.withUnsafeBytes { inBytes in
                        let base = inBytes.baseAddress.map { $0 + consumed * MemoryLayout<Sample>.stride }
                        return soxr_process(
                            handle,
                            base,
                            input.count - consumed,
                            &inputDone,
                            out.baseAddress,
                            capacity,
                            &outputDone
                        )
                    }
                }
                return soxr_process(handle, nil, 0, nil, out.baseAddress, capacity, &outputDone)
            }
            if let error { throw ResamplerError.soxr(operation: "resample", message: String(cString: error)) }
            consumed += inputDone
            if inputDone == 0 && outputDone == 0 && input != nil { return output }
            output.append(contentsOf: chunk[0..<outputDone])
            let inputLeft = input.map { $0.count - consumed } ?? 0
            if outputDone < capacity && inputLeft == 0 { return output }
        }
    }
}

@available(*, unavailable)
extension Resampler: Sendable {}

extension PCMBuffer {
    /// This buffer at another sample rate (itself when the rate already matches).
    package func resampled(to rate: Int) throws -> PCMBuffer {
        if rate == sampleRate { return self }
        return PCMBuffer(sampleRate: rate, samples: try Resampler.resample(samples, from: sampleRate, to: rate))
    }
}
