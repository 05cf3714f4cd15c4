import Testing

@testable import AudioIO

@Suite struct ResamplerTests {
    static let rates = [16_000, 22_050, 24_000, 44_100, 48_000]
    static let pairs = rates.flatMap { a in rates.filter { $0 != a }.map { (a, $0) } }

    @Test(arguments: pairs, [Resampler<Int16>.Quality.high, .lowLatency])
    func `a sine keeps its frequency and the length scales with the rate`(
        rates: (from: Int, to: Int), quality: Resampler<Int16>.Quality
    ) throws {
        let (from, to) = rates
        let input = TestAudio.sineInt16(frequency: 440, rate: from, seconds: 0.5)
        let output = try Resampler.resample(input, from: from, to: to, quality: quality)
        let expected = Double(input.count) * Double(to) / Double(from)
        #expect(abs(Double(output.count) - expected) <= 2, "\(output.count) samples, expected \(expected)")
        let frequency = TestAudio.estimatedFrequency(output, rate: to)
        #expect(abs(frequency - 440) < 2, "measured \(frequency) Hz")
        #expect(abs(TestAudio.rms(output) / TestAudio.rms(input) - 1) < 0.02)
    }

    @Test(arguments: [(22_050, 16_000), (16_000, 48_000), (44_100, 24_000)])
    func `streaming in 20 ms chunks gives the same signal as one shot`(from: Int, to: Int) throws {
        let input = TestAudio.sineInt16(frequency: 300, rate: from, seconds: 0.4)
        let whole = try Resampler.resample(input, from: from, to: to)
        let resampler = try Resampler<Int16>(from: from, to: to)
        var streamed: [Int16] = []
        for start in stride(from: 0, to: input.count, by: from / 50) {
            streamed += try resampler.process(Array(input[start..<min(start + from / 50, input.count)]))
        }
        streamed += try resampler.flush()
        #expect(abs(streamed.count - whole.count) <= 1)
        let n = min(streamed.count, whole.count)
        let worst = zip(streamed[0..<n], whole[0..<n]).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= 2, "streamed and one-shot differ by up to \(worst)")
    }

    @Test(arguments: [(48_000, 16_000), (16_000, 48_000), (22_050, 48_000), (44_100, 48_000)])
    func `low-latency streaming holds back only a few milliseconds`(from: Int, to: Int) throws {
        let resampler = try Resampler<Int16>(from: from, to: to, quality: .lowLatency)
        let chunk = TestAudio.sineInt16(frequency: 440, rate: from, seconds: 0.02)
        var out = 0
        for _ in 0..<10 { out += try resampler.process(chunk).count }
        // What is held back is the filter's delay: a few milliseconds, not a growing backlog.
        let heldBack = Double(10 * chunk.count) * Double(to) / Double(from) - Double(out)
        print("Resampler \(from) -> \(to) Hz: delay \(resampler.delay) samples, held back \(heldBack)")
        #expect(heldBack >= 0 && heldBack < Double(to) * 0.008, "\(heldBack) samples held back")
        #expect(abs(resampler.delay - heldBack) < Double(to) * 0.005)
    }

    @Test func `a flushed resampler starts a fresh signal`() throws {
        let resampler = try Resampler<Float>(from: 48_000, to: 16_000)
        let input = TestAudio.sine(frequency: 1000, rate: 48_000, seconds: 0.1)
        let first = try resampler.process(input) + resampler.flush()
        let second = try resampler.process(input) + resampler.flush()
        #expect(first.count == 1600 && second.count == first.count)
        #expect(zip(first, second).allSatisfy { abs($0 - $1) < 1e-5 })
    }

    @Test func `the same rate passes samples through untouched`() throws {
        let input = TestAudio.sineInt16(frequency: 440, rate: 16_000, seconds: 0.05)
        #expect(try Resampler.resample(input, from: 16_000, to: 16_000) == input)
    }

    @Test(arguments: [0, -8000, 5_000_000])
    func `an impossible rate is refused with an error`(rate: Int) {
        #expect(throws: ResamplerError.unsupportedRate(rate)) { try Resampler<Int16>(from: 16_000, to: rate) }
    }
}
