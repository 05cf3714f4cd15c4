import Foundation

/// A loudspeaker-to-microphone path made up for measuring echo cancellation without a room: the far end
/// delayed, low-pass filtered (a small speaker loses the highs), given one reflection, and attenuated.
package struct SyntheticEchoPath: Sendable, Equatable {
    package var delayMs: Int
    /// Linear gain of the direct path (0.5 is 6 dB of echo return loss).
    package var gain: Double
    /// A reflection this much later than the direct path, at `reflectionGain` of it.
    package var reflectionMs: Int
    package var reflectionGain: Double

    package init(delayMs: Int, gain: Double = 0.5, reflectionMs: Int = 7, reflectionGain: Double = 0.3) {
        self.delayMs = delayMs
        self.gain = gain
        self.reflectionMs = reflectionMs
        self.reflectionGain = reflectionGain
    }

    /// The echo of `far` (16 kHz), as long as `far`.
    package func echo(of far: [Int16], sampleRate: Int = AudioFrame.sampleRate) -> [Float] {
        let delay = delayMs * sampleRate / 1000
        let reflection = delay + reflectionMs * sampleRate / 1000
        var out = [Float](repeating: 0, count: far.count)
        var smoothed: Float = 0
        for i in 0..<far.count {
            var x: Float = i >= delay ? Float(far[i - delay]) : 0
            if i >= reflection { x += Float(reflectionGain) * Float(far[i - reflection]) }
            smoothed = 0.6 * smoothed + 0.4 * x  // one-pole low-pass, corner near 1.3 kHz
            out[i] = Float(gain) * smoothed
        }
        return out
    }
}

/// The figures of echo cancellation, computed the same way for the tests and `bench aec`.
package enum EchoMeasurement {
    /// Echo return loss enhancement in dB: how much weaker the cleaned capture is than the raw one over the
    /// 20 ms frames from `fromSample` on where the raw capture holds echo (RMS at least `activeRMS`, so that
    /// the pauses of speech, where there is nothing to cancel, do not count). nil without such frames.
    package static func erle(raw: [Int16], cleaned: [Int16], fromSample: Int = 0, activeRMS: Double = 300) -> Double? {
        let frame = AudioFrame.samplesPerFrame
        let threshold = activeRMS * activeRMS * Double(frame)
        var rawEnergy = 0.0
        var cleanedEnergy = 0.0
        let end = min(raw.count, cleaned.count)
        for start in stride(from: max(0, fromSample), to: end - frame + 1, by: frame) {
            let r = AudioLevel.sumOfSquares(raw[start..<start + frame])
            guard r >= threshold else { continue }
            rawEnergy += r
            cleanedEnergy += AudioLevel.sumOfSquares(cleaned[start..<start + frame])
        }
        guard rawEnergy > 0 else { return nil }
        // A cleaned capture of pure digital silence would be infinitely better: count it as one LSB of noise.
        return 10 * log10(rawEnergy / max(cleanedEnergy, 1))
    }

    /// The median of `erle` over each whole second from `fromSample` on (seconds without echo left out): what the
    /// canceller does most of the time, which a second or so of a sound server's glitch (PipeWire now and then
    /// drops a quantum from the loopback; the aligner puts the reference back within about a second) does not
    /// decide. nil without such seconds.
    package static func medianSecondERLE(raw: [Int16], cleaned: [Int16], fromSample: Int = 0, activeRMS: Double = 300) -> Double? {
        let values = secondERLE(raw: raw, cleaned: cleaned, fromSample: fromSample, activeRMS: activeRMS).sorted()
        guard !values.isEmpty else { return nil }
        return values.count % 2 == 1 ? values[values.count / 2] : (values[values.count / 2 - 1] + values[values.count / 2]) / 2
    }

    /// `erle` over each whole second from `fromSample` on, in order, seconds without echo left out.
    package static func secondERLE(raw: [Int16], cleaned: [Int16], fromSample: Int = 0, activeRMS: Double = 300) -> [Double] {
        let second = AudioFrame.sampleRate
        let end = min(raw.count, cleaned.count)
        return stride(from: max(0, fromSample), to: end - second + 1, by: second).compactMap { start in
            erle(raw: Array(raw[start..<start + second]), cleaned: Array(cleaned[start..<start + second]), activeRMS: activeRMS)
        }
    }

    /// Normalised correlation of two signals over their common length (1 = identical up to gain). Plain
    /// loops over raw buffers: debug builds run generic `zip` many times slower.
    package static func correlation(_ x: ArraySlice<Int16>, _ y: ArraySlice<Int16>) -> Double {
        var xy = 0.0, xx = 0.0, yy = 0.0
        x.withUnsafeBufferPointer { a in
            y.withUnsafeBufferPointer { b in
                for i in 0..<min(a.count, b.count) {
                    let p = Double(a[i]), q = Double(b[i])
                    xy += p * q
                    xx += p * p
                    yy += q * q
                }
            }
        }
        return xx > 0 && yy > 0 ? xy / (xx * yy).squareRoot() : 0
    }

    /// The best `correlation` of `cleaned` against `reference` when `cleaned` lags by 0...`maxLag` samples:
    /// WebRTC's canceller hands its output back 7 ms (112 samples at 16 kHz) late.
    package static func laggedCorrelation(_ cleaned: [Int16], _ reference: [Int16], maxLag: Int = 480) -> (lag: Int, value: Double) {
        var best = (lag: 0, value: -1.0)
        let n = min(reference.count, cleaned.count - maxLag)
        guard n > 0 else { return best }
        for lag in 0...maxLag {
            let c = correlation(cleaned[lag..<lag + n], reference[0..<n])
            if c > best.value { best = (lag, c) }
        }
        return best
    }

    /// Runs a whole capture through a fresh canceller, frame by frame, with `far` as the reference aligned
    /// sample for sample with `near` (the path's delay puts the echo later). Returns the cleaned capture and
    /// the CPU time per 20 ms frame (analysis and processing together), in microseconds.
    package static func cancel(
        near: [Int16], far: [Int16], options: EchoCancellerOptions = EchoCancellerOptions()
    ) throws -> (cleaned: [Int16], microsecondsPerFrame: [Double]) {
        let canceller = try EchoCanceller(options: options)
        let frame = AudioFrame.samplesPerFrame
        var cleaned: [Int16] = []
        cleaned.reserveCapacity(near.count)
        var costs: [Double] = []
        for start in stride(from: 0, to: near.count - frame + 1, by: frame) {
            let reference = start + frame <= far.count ? Array(far[start..<start + frame]) : [Int16](repeating: 0, count: frame)
            let captured = Array(near[start..<start + frame])
            let began = threadCPUNanoseconds()
            try canceller.analyzeReverse(reference)
            let out = try canceller.process(captured)
            costs.append(Double(threadCPUNanoseconds() - began) / 1000)
            cleaned += out
        }
        return (cleaned, costs)
    }

    /// Float to 16-bit PCM, clipped.
    package static func pcm(_ samples: [Float]) -> [Int16] {
        samples.map { Int16(max(-32768, min(32767, $0.rounded()))) }
    }

    /// Deterministic low-level noise (a room, a microphone's hiss) with RMS `rms`.
    package static func noise(count: Int, rms: Double, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [Float] {
        var state = seed
        let scale = Float(rms * 3.0.squareRoot())  // uniform in ±a has RMS a/√3
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return scale * (Float(Int64(bitPattern: state) >> 11) / Float(1 << 52))
        }
    }
}
