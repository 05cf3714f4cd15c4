import Foundation
import Synchronization

@testable import AudioIO

/// Audio and paths shared by the AudioIO tests.
enum TestAudio {
    /// The package root, found from this file's path so tests work from any working directory.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Debian's pocketsphinx-testdata: real speech present on every machine that ran the install script.
    static let pocketsphinxData = "/usr/share/pocketsphinx/test/data"
    static let goForwardRaw = pocketsphinxData + "/goforward.raw"
    static let cardsWav = pocketsphinxData + "/cards/001.wav"

    /// `../shared/corpus/speech` beside the package root, when present.
    static var sharedSpeechDirectory: URL? {
        let dir = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus/speech")
        return FileManager.default.fileExists(atPath: dir.path) ? dir : nil
    }

    /// A sine at `frequency` Hz, `amplitude` in -1...1, as floats.
    static func sine(frequency: Double, rate: Int, seconds: Double, amplitude: Double = 0.5) -> [Float] {
        (0..<Int(Double(rate) * seconds)).map { Float(amplitude * sin(2 * .pi * frequency * Double($0) / Double(rate))) }
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
        var xy = 0.0, xx = 0.0, yy = 0.0
        for (a, b) in zip(x, y) {
            xy += Double(a) * Double(b)
            xx += Double(a) * Double(a)
            yy += Double(b) * Double(b)
        }
        return xx > 0 && yy > 0 ? xy / (xx * yy).squareRoot() : 0
    }

    /// The best correlation of `decoded` against `original` over lags 0...maxLag (codec delay).
    static func bestCorrelation(original: [Int16], decoded: [Int16], maxLag: Int) -> (lag: Int, value: Double) {
        var best = (lag: 0, value: -1.0)
        for lag in 0...maxLag {
            let n = min(original.count, decoded.count - lag)
            guard n > 0 else { break }
            let c = correlation(original[0..<n], decoded[lag..<lag + n])
            if c > best.value { best = (lag, c) }
        }
        return best
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
            })
    }
}
