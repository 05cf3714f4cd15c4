import Foundation
import Synchronization

@testable import AudioIO

/// Audio and paths shared by the AudioIO tests.
enum TestAudio {
    /// Debian's pocketsphinx-testdata: real speech present on every machine that ran the install script.
    static let pocketsphinxData = "/usr/share/pocketsphinx/test/data"
    static let goForwardRaw = pocketsphinxData + "/goforward.raw"
    static let cardsWav = pocketsphinxData + "/cards/001.wav"

    /// A sine at `frequency` Hz, `amplitude` in -1...1, as floats.
    static func sine(frequency: Double, rate: Int, seconds: Double, amplitude: Double = 0.5) -> [Float] {
        (0..<Int(Double(rate) * seconds)).map {
            Float(amplitude * sin(2 * .pi * frequency * Double($0) / Double(rate)))
        }
    }

    static func sineInt16(frequency: Double, rate: Int, seconds: Double, amplitude: Double = 0.5) -> [Int16] {
        sine(frequency: frequency, rate: rate, seconds: seconds, amplitude: amplitude).map(floatToInt16)
    }

    /// Frequency estimated from rising zero crossings over the middle of the signal (edges hold filter ramps).
    static func estimatedFrequency(_ samples: [Int16], rate: Int) -> Double {
        let a = samples.count / 10
        let b = samples.count - samples.count / 10
        var crossings: [Int] = []
        for i in a + 1..<b where samples[i - 1] < 0 && samples[i] >= 0 { crossings.append(i) }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * Double(rate) / Double(last - first)
    }

    static func rms(_ samples: some Collection<Int16>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    /// Normalised cross-correlation of two equally long stretches.
    static func correlation(_ x: ArraySlice<Int16>, _ y: ArraySlice<Int16>) -> Double {
        EchoMeasurement.correlation(x, y)
    }

    /// The best correlation of `decoded` against `original` over the given lags (codec delay).
    static func bestCorrelation(original: [Int16], decoded: [Int16], lags: ClosedRange<Int>) -> (
        lag: Int, value: Double
    ) {
        var best = (lag: 0, value: -1.0)
        for lag in lags where lag >= 0 {
            let n = min(original.count, decoded.count - lag)
            guard n > 0 else { break }
            let c = correlation(original[0..<n], decoded[lag..<lag + n])
            if c > best.value { best = (lag, c) }
        }
        return best
    }

    /// The signal through a 4th-order Butterworth-like high-pass (two RBJ biquads at `cutoff`), to compare
    /// the speech band only: Opus's VOIP mode removes rumble below about 100 Hz, which some clips are full of.
    static func highPassed(_ samples: [Int16], rate: Int, cutoff: Double = 120) -> [Int16] {
        let w = 2 * Double.pi * cutoff / Double(rate)
        let alpha = sin(w) / (2 * 0.7071)
        let a0 = 1 + alpha
        let b0 = (1 + cos(w)) / 2 / a0, b1 = -(1 + cos(w)) / a0, b2 = b0
        let a1 = -2 * cos(w) / a0, a2 = (1 - alpha) / a0
        var signal = samples.map(Double.init)
        for _ in 0..<2 {
            var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
            for i in signal.indices {
                let x = signal[i]
                let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
                (x2, x1, y2, y1) = (x1, x, y1, y)
                signal[i] = y
            }
        }
        return signal.map { Int16(max(-32768, min(32767, $0.rounded()))) }
    }

    /// Speech from pocketsphinx-testdata at 16 kHz.
    static func goForward() throws -> [Int16] {
        try AudioFileReader.readMono(path: goForwardRaw).samples
    }

    /// A fresh temporary directory, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("audioio-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}

/// A virtual monotonic clock: sleeping jumps time forward to the deadline at once and records it.
final class VirtualClock: Sendable {
    private let state = Mutex((now: UInt64(1_000_000_000), sleeps: [UInt64]()))

    var sleeps: [UInt64] { state.withLock { $0.sleeps } }
    var now: UInt64 { state.withLock { $0.now } }

    var pacingClock: PacingClock {
        PacingClock(
            now: { self.state.withLock { $0.now } },
            sleepUntil: { deadline in
                self.state.withLock { s in
                    s.sleeps.append(deadline)
                    s.now = max(s.now, deadline)
                }
                await Task.yield()
                try Task.checkCancellation()
            }
        )
    }
}
