import AudioIO
import Foundation

/// Codec and resampler costs on this machine, for `openclaw-talk bench audio`.
package struct OpusBenchmarkReport: Codable, Sendable, Equatable {
    /// Resampling cost for one rate pair, streamed in 20 ms chunks.
    package struct ResamplerCost: Codable, Sendable, Equatable {
        package var fromRate: Int
        package var toRate: Int
        /// `high` or `lowLatency` (see `Resampler.Quality`).
        package var quality: String
        /// CPU microseconds spent per second of audio resampled.
        package var microsecondsPerAudioSecond: Double
    }

    package var signal: String
    package var sampleRate: Int
    package var bitrate: Int
    package var complexity: Int
    package var frames: Int
    /// Thread CPU microseconds per 20 ms frame (median and 95th percentile); likewise decode and conceal.
    package var encodeMicrosecondsMedian: Double
    package var encodeMicrosecondsP95: Double
    package var decodeMicrosecondsMedian: Double
    package var decodeMicrosecondsP95: Double
    package var concealMicrosecondsMedian: Double
    /// Payload bytes per second of audio at the default bitrate (what goes over the wire, before framing).
    package var bytesPerSecond: Double
    package var bytesPerPacketMean: Double
    /// Median encode time as a share of one core in real time (encode time / 20 ms).
    package var encodeCoreShare: Double
    package var resampler: [ResamplerCost]
}

/// Measures Opus encode and decode CPU time per 20 ms frame at the project's settings (16 kHz, 24 kbit/s,
/// complexity 5, VOIP), and the resampler's cost per second of audio for the conversions Talk mode makes.
package enum OpusBenchmark {
    /// Rate pairs the audio path resamples: capture from 44.1/48 kHz devices, speech synthesis and
    /// Gateway clips (22.05, 24 kHz) to a 48 kHz sink, and Ogg Opus's 48 kHz output back to 16 kHz.
    package static let resamplerPairs = [
        (48_000, 16_000), (44_100, 16_000), (22_050, 48_000), (24_000, 48_000), (48_000, 24_000),
    ]

    /// Runs the benchmark over `speech` (16 kHz mono; a generated speech-like signal when nil), looped
    /// to `frames` 20 ms frames after a short warm-up, and each resampler over `resamplerSeconds` of audio.
    package static func run(
        speech: [Int16]? = nil, signalName: String? = nil, frames: Int = 3000, resamplerSeconds: Double = 10
    ) throws -> OpusBenchmarkReport {
        let configuration = OpusEncoder.Configuration()
        let source = speech.flatMap { $0.isEmpty ? nil : $0 } ?? SpeechLikeSignal.generate(seconds: 10)
        let name = signalName ?? (speech == nil ? "generated speech-like signal" : "speech")
        let n = configuration.sampleRate / 50
        let input = (0..<frames).map { frame -> [Int16] in
            (0..<n).map { source[(frame * n + $0) % source.count] }
        }
        let encoder = try OpusEncoder(configuration: configuration)
        let decoder = try OpusDecoder(sampleRate: configuration.sampleRate)
        for frame in input.prefix(50) { _ = try decoder.decode(try encoder.encode(frame)) }
        encoder.reset()
        decoder.reset()

        var packets: [[UInt8]] = []
        packets.reserveCapacity(frames)
        var encodeTimes: [Double] = []
        for frame in input {
            let start = threadCPUNanoseconds()
            let packet = try encoder.encode(frame)
            encodeTimes.append(Double(threadCPUNanoseconds() - start) / 1000)
            packets.append(packet)
        }
        var decodeTimes: [Double] = []
        var concealTimes: [Double] = []
        for (index, packet) in packets.enumerated() {
            let start = threadCPUNanoseconds()
            _ = try decoder.decode(packet)
            decodeTimes.append(Double(threadCPUNanoseconds() - start) / 1000)
            if index % 10 == 5 {
                let start = threadCPUNanoseconds()
                _ = try decoder.decodeMissing()
                concealTimes.append(Double(threadCPUNanoseconds() - start) / 1000)
            }
        }
        let totalBytes = Double(packets.reduce(0) { $0 + $1.count })
        let encodeMedian = (BenchStatistics.percentile(encodeTimes, 0.5) ?? 0)
        return OpusBenchmarkReport(
            signal: name,
            sampleRate: configuration.sampleRate,
            bitrate: configuration.bitrate,
            complexity: configuration.complexity,
            frames: frames,
            encodeMicrosecondsMedian: encodeMedian,
            encodeMicrosecondsP95: (BenchStatistics.percentile(encodeTimes, 0.95) ?? 0),
            decodeMicrosecondsMedian: (BenchStatistics.percentile(decodeTimes, 0.5) ?? 0),
            decodeMicrosecondsP95: (BenchStatistics.percentile(decodeTimes, 0.95) ?? 0),
            concealMicrosecondsMedian: (BenchStatistics.percentile(concealTimes, 0.5) ?? 0),
            bytesPerSecond: totalBytes / (Double(frames) / 50),
            bytesPerPacketMean: totalBytes / Double(frames),
            encodeCoreShare: encodeMedian / 20_000,
            resampler: try resamplerPairs.flatMap { pair in
                try [Resampler<Int16>.Quality.high, .lowLatency].map {
                    try resamplerCost(from: pair.0, to: pair.1, quality: $0, seconds: resamplerSeconds)
                }
            }
        )
    }

    /// Streams `seconds` of a speech-like signal through a resampler in 20 ms chunks.
    static func resamplerCost(
        from: Int, to: Int, quality: Resampler<Int16>.Quality, seconds: Double
    ) throws -> OpusBenchmarkReport.ResamplerCost {
        let signal = SpeechLikeSignal.generate(seconds: seconds, sampleRate: from)
        let resampler = try Resampler<Int16>(from: from, to: to, quality: quality)
        let chunk = from / 50
        let start = threadCPUNanoseconds()
        for offset in stride(from: 0, to: signal.count, by: chunk) {
            _ = try resampler.process(Array(signal[offset..<min(offset + chunk, signal.count)]))
        }
        _ = try resampler.flush()
        let micros = Double(threadCPUNanoseconds() - start) / 1000
        return .init(
            fromRate: from, toRate: to, quality: quality == .high ? "high" : "lowLatency",
            microsecondsPerAudioSecond: micros / seconds)
    }

    /// CPU time of the calling thread: unlike wall time, it leaves out time other processes took on a busy
    /// machine, so the figures say what the codec costs. `run` is synchronous, so it stays on one thread.
}
