import Foundation
import Testing

@testable import AudioIO
@testable import TalkBench

/// Runs the benchmark and prints its figures; asserts only what does not depend on the machine's speed.
@Suite struct OpusBenchmarkTests {
    @Test func `the benchmark reports costs for speech and the generated signal`() throws {
        let speech = try TestAudio.goForward()
        for (signal, name) in [(speech, "goforward.raw"), (nil, nil)] as [([Int16]?, String?)] {
            let report = try OpusBenchmark.run(
                speech: signal, signalName: name, frames: 500, resamplerSeconds: 1)
            let json = try JSONEncoder().encode(report)
            print("OpusBenchmark: \(String(decoding: json, as: UTF8.self))")
            #expect(report.frames == 500 && report.bitrate == 24_000 && report.complexity == 5)
            #expect(report.encodeMicrosecondsMedian > 0 && report.decodeMicrosecondsMedian > 0)
            // Encoding a 20 ms frame takes far less than 20 ms of CPU; the share of a core is that ratio.
            #expect(report.encodeMicrosecondsMedian < 20_000 && report.decodeMicrosecondsMedian < 20_000)
            #expect(report.encodeCoreShare == report.encodeMicrosecondsMedian / 20_000)
            #expect(abs(report.bytesPerSecond - report.bytesPerPacketMean * 50) < 1e-6)
            // A 24 kbit/s VBR stream on speech: about 3000 bytes/s, never the 32000 of raw PCM.
            #expect(report.bytesPerSecond > 1000 && report.bytesPerSecond < 4500, "\(report.bytesPerSecond) B/s")
            #expect(report.resampler.count == OpusBenchmark.resamplerPairs.count * 2)
            #expect(try JSONDecoder().decode(OpusBenchmarkReport.self, from: json) == report)
        }
    }

    @Test func `the median and the 95th percentile are read from the sorted timings`() {
        let timings = (1...100).map(Double.init).shuffled()
        #expect(BenchStatistics.percentile(timings, 0.5) == 51)
        #expect(BenchStatistics.percentile(timings, 0.95) == 95)
        #expect(BenchStatistics.percentile([7], 0.95) == 7)
        // Not measured is not a number (the Opus report, whose timings are never empty, read 0 here before).
        #expect(BenchStatistics.percentile([], 0.5) == nil)
    }

    @Test func `the generated signal is speech-like enough for Opus`() throws {
        let signal = SpeechLikeSignal.generate(seconds: 2)
        #expect(signal.count == 32_000)
        // Pauses between syllables, and voiced stretches with real energy.
        let frameRMS = stride(from: 0, to: signal.count, by: 320).map { TestAudio.rms(signal[$0..<$0 + 320]) }
        #expect(frameRMS.filter { $0 < 400 }.count > 10 && frameRMS.filter { $0 > 2000 }.count > 40)
        #expect(SpeechLikeSignal.generate(seconds: 2) == signal)
    }
}
