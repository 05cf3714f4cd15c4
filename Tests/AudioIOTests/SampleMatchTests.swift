import Testing

@testable import AudioIO

/// `SampleMatch`, the aligner's sample-exact correlation: its integer sums and prefix-sum energies give, to the bit,
/// the correlation the plain sum of the samples in Double gives, so where the aligner places the echo (and when it
/// moves the reference) is what it was with three Double sums per lag.
@Suite struct SampleMatchTests {
    static let window = EchoTuning.Alignment.fineSamples
    /// What the aligner keeps of the reference: the window, the envelopes' lags and the pitch search.
    static let kept = window + EchoTuning.Alignment.maxLagBlocks * EchoTuning.Alignment.blockSamples
        + EchoTuning.Alignment.pitchSearchSamples

    /// The correlation summed in Double over the samples themselves, lag by lag.
    static func plain(reference r: [Int16], capture c: [Int16], lag: Int) -> Double? {
        let n = c.count
        let start = r.count - n - lag
        let count = min(n, n + lag)
        guard start >= 0, count >= n / 2, start + count <= r.count else { return nil }
        var dot = 0.0, energy = 0.0, captured = 0.0
        for i in 0..<count {
            let v = Double(r[start + i]), w = Double(c[i])
            dot += v * w
            energy += v * v
            captured += w * w
        }
        guard energy > 0, captured > 0 else { return nil }
        return dot / (energy * captured).squareRoot()
    }

    /// The lags at which the two differ, as "none" or how many and the first.
    static func mismatches(reference: [Int16], capture: [Int16], lags: some Sequence<Int>) -> String {
        let match = SampleMatch(reference: reference, capture: capture, window: capture.count)
        let differing = lags.filter { match?.correlation(atSamples: $0) != plain(reference: reference, capture: capture, lag: $0) }
        return differing.first.map { "\(differing.count) lags, from \($0)" } ?? "none"
    }

    @Test func `the echo of speech correlates at every lag exactly as the samples summed in Double do`() throws {
        let far = try ResidualEchoTests.speech()
        let near = EchoBenchmark.nearEnd(far: far, path: SyntheticEchoPath(delayMs: 60), plus: nil)
        let end = far.count - 1000
        let reference = Array(far[(end - Self.kept)..<end])
        let capture = Array(near[(end - Self.window)..<end])
        // Every lag the aligner searches around its 60 ms (960-sample) echo, the negative ones and those past the end.
        let lags = Array(-Self.window...(-Self.window / 2 + 200)) + Array(stride(from: -3000, through: Self.kept, by: 7))
        #expect(Self.mismatches(reference: reference, capture: capture, lags: lags) == "none")
        let match = try #require(SampleMatch(reference: reference, capture: capture, window: Self.window))
        #expect(try #require(match.correlation(atSamples: 960)) > 0.9, "the echo is where the path put it")
    }

    @Test func `full-scale sound and silence give the same figures as the Double sums`() {
        let loud = [Int16](repeating: .min, count: Self.kept)
        let edge = (0..<Self.window).map { $0 % 2 == 0 ? Int16.min : Int16.max }
        let lags = Array(stride(from: -4100, through: 8500, by: 11)) + [-4000, 8400]
        #expect(Self.mismatches(reference: loud, capture: Array(loud.prefix(Self.window)), lags: lags) == "none")
        #expect(Self.mismatches(reference: loud, capture: edge, lags: lags) == "none")
        let silent = [Int16](repeating: 0, count: Self.kept)
        #expect(Self.mismatches(reference: silent, capture: edge, lags: -10...10) == "none")
        #expect(SampleMatch(reference: loud, capture: Array(edge.dropLast()), window: Self.window) == nil)
    }
}
