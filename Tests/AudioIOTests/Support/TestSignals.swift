import AudioIO
import Foundation
import TalkTestSupport

/// Signals for the loopback tests, defined as functions of time so they can be rendered at any rate.
enum TestSignals {
    /// A linear sweep with raised-cosine edges: its autocorrelation has one sharp peak.
    static func sweep(rate: Int, seconds: Double = 0.25, from f0: Double = 300, to f1: Double = 3_000, amplitude: Double = 0.5) -> PCMBuffer {
        let n = Int(Double(rate) * seconds)
        let samples = (0..<n).map { i -> Int16 in
            let t = Double(i) / Double(rate)
            let phase = 2 * Double.pi * (f0 * t + (f1 - f0) * t * t / (2 * seconds))
            let edge = min(1, min(t, seconds - t) / 0.01)
            return Int16(amplitude * edge * 32767 * sin(phase))
        }
        return PCMBuffer(sampleRate: rate, samples: samples)
    }

    static func tone(rate: Int, seconds: Double, hz: Double = 440, amplitude: Double = 0.5) -> PCMBuffer {
        let n = Int(Double(rate) * seconds)
        return PCMBuffer(
            sampleRate: rate,
            samples: (0..<n).map { Int16(amplitude * 32767 * sin(2 * Double.pi * hz * Double($0) / Double(rate))) })
    }

    struct Correlation {
        var lag: Int
        var peak: Double
        /// The largest |correlation| more than `guardSamples` away from the peak.
        var runnerUp: Double
    }

    /// Cross-correlation of `reference` against every position of `signal`, divided by the reference's
    /// energy: 1.0 where `signal` holds an exact copy at unit gain. Seconds of CPU in a debug build, so it
    /// runs off the cooperative pool, where it would stall the timers of the suites running beside it.
    static func correlate(_ reference: [Int16], in signal: [Int16], guardSamples: Int = 40) async throws -> Correlation {
        try await offPool { correlateBlocking(reference, in: signal, guardSamples: guardSamples) }
    }

    private static func correlateBlocking(_ reference: [Int16], in signal: [Int16], guardSamples: Int) -> Correlation {
        let ref = reference.map(Float.init)
        let sig = signal.map(Float.init)
        let refEnergy = ref.reduce(0) { $0 + $1 * $1 }
        let lags = max(0, sig.count - ref.count)
        var scores = [Double](repeating: 0, count: lags)
        ref.withUnsafeBufferPointer { r in
            sig.withUnsafeBufferPointer { s in
                for lag in 0..<lags {
                    var dot: Float = 0
                    for i in 0..<r.count { dot += r[i] * s[lag + i] }
                    scores[lag] = abs(Double(dot)) / Double(max(refEnergy, 1))
                }
            }
        }
        guard let best = scores.indices.max(by: { scores[$0] < scores[$1] }) else {
            return Correlation(lag: 0, peak: 0, runnerUp: 0)
        }
        let runnerUp = scores.indices.filter { abs($0 - best) > guardSamples }.map { scores[$0] }.max() ?? 0
        return Correlation(lag: best, peak: scores[best], runnerUp: runnerUp)
    }
}

extension Array where Element == AudioFrame {
    /// Capture time of sample `index` of the concatenated frames.
    func captureTimeNs(ofSample index: Int) -> UInt64? {
        let frame = index / AudioFrame.samplesPerFrame
        guard indices.contains(frame) else { return nil }
        let after = UInt64(AudioFrame.samplesPerFrame - 1 - index % AudioFrame.samplesPerFrame)
        return self[frame].captureTimeNs - after * 62_500
    }

    /// Where sample 0 was captured: the median over all frames of what each frame's timestamp says, as one
    /// timestamp jitters by tens of milliseconds on a loaded machine.
    var firstSampleNs: UInt64? {
        let says = indices.compactMap { captureTimeNs(ofSample: $0 * AudioFrame.samplesPerFrame) }.enumerated()
            .map { Int64(bitPattern: $0.element) - Int64($0.offset * AudioFrame.samplesPerFrame) * 62_500 }.sorted()
        return says.isEmpty ? nil : UInt64(says[says.count / 2])
    }

    /// The samples captured, and the reference laid out beside them sample for sample (by `firstSampleNs`).
    func besideReference(_ reference: EchoReference) -> (captured: [Int16], laid: [Int16])? {
        guard let origin = firstSampleNs else { return nil }
        let captured = flatMap(\.samples)
        return (captured, reference.samples(from: origin, count: captured.count))
    }
}
