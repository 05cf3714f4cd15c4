/// Measures, from the signals themselves, how far the echo in the capture lags the reference fed with it,
/// and says how to move the reference when that lag leaves the window WebRTC's canceller can work in.
///
/// Capture timestamps alone cannot place the reference: they come from the sound server's latency
/// estimates, jitter by ±30 ms and, on a null sink's monitor, slide by tens to hundreds of milliseconds for
/// seconds after playback starts. The echo itself is exact. Every 200 ms this correlates the loudness
/// envelopes (2 ms steps) of the last two seconds of reference and capture over lags of -200 to +500 ms;
/// a clear peak outside `acceptedMs` yields a correction that brings the lag back to `targetMs`.
struct EchoAligner {
    /// The lags the canceller handles with its 60 ms delay hint: 20 to 150 ms, measured on synthetic paths.
    static let acceptedMs = 15...140
    static let targetMs = 60
    /// How clearly the envelopes must match before the reference is moved.
    static let minimumCorrelation = 0.6

    static let blockSamples = 32  // 2 ms at 16 kHz
    static let blockMs = 2.0
    static let windowBlocks = 750  // 1.5 s
    static let minLagBlocks = -100
    static let maxLagBlocks = 250
    static let everyFrames = 10

    private var reference: [Float] = []
    private var capture: [Float] = []
    private var frames = 0
    /// An out-of-window lag waiting for a second measurement to confirm it.
    private var pendingLagMs: Double?

    /// The lag last measured with confidence, in milliseconds.
    private(set) var measuredLagMs: Double?

    /// Adds one frame of the reference fed to the canceller and of the raw capture; returns how many
    /// nanoseconds later to read the reference from now on, or nil to leave it.
    mutating func add(reference far: [Int16], capture near: [Int16]) -> Int64? {
        Self.envelope(far, into: &reference)
        Self.envelope(near, into: &capture)
        let keep = Self.windowBlocks + Self.maxLagBlocks
        if reference.count > keep { reference.removeFirst(reference.count - keep) }
        if capture.count > Self.windowBlocks { capture.removeFirst(capture.count - Self.windowBlocks) }
        frames += 1
        guard frames % Self.everyFrames == 0, reference.count == keep, capture.count == Self.windowBlocks,
            let lag = Self.lag(reference: reference, capture: capture)
        else { return nil }
        measuredLagMs = lag
        guard !Self.acceptedMs.contains(Int(lag.rounded())) else {
            pendingLagMs = nil
            return nil
        }
        guard let pending = pendingLagMs, abs(pending - lag) <= 6 else {
            pendingLagMs = lag
            return nil
        }
        pendingLagMs = nil
        // A reference read x later meets each sound x sooner, so its echo lags it x more. The history before
        // the move no longer lines up.
        reference.removeAll(keepingCapacity: true)
        capture.removeAll(keepingCapacity: true)
        return Int64((Double(Self.targetMs) - lag) * 1_000_000)
    }

    /// The lag in ms at which the capture's envelope best matches the reference's, when the match is clear.
    /// `reference` holds `maxLagBlocks` more (older) blocks than `capture`; both end together in time.
    /// Prefix sums give each lag's reference mean and energy at once, so an estimate costs one pass of
    /// multiply-adds per lag (about 260 000 in all), not a copy per lag: it runs on the capture actor.
    static func lag(reference: [Float], capture: [Float]) -> Double? {
        let n = capture.count
        guard reference.count == n + maxLagBlocks, n > 0 else { return nil }
        let cMean = capture.reduce(0, +) / Float(n)
        let c = capture.map { $0 - cMean }
        let cNorm = c.reduce(0) { $0 + $1 * $1 }.squareRoot()
        guard cNorm > 0 else { return nil }
        var sum = [Double](repeating: 0, count: reference.count + 1)
        var squares = [Double](repeating: 0, count: reference.count + 1)
        for (i, v) in reference.enumerated() {
            sum[i + 1] = sum[i] + Double(v)
            squares[i + 1] = squares[i] + Double(v) * Double(v)
        }
        var best: (lag: Int, value: Double)?
        reference.withUnsafeBufferPointer { r in
            c.withUnsafeBufferPointer { c in
                // capture[i] is compared with the reference `lag` blocks earlier; lags below 0 reach past the
                // reference's end, so they compare the part that overlaps.
                for lag in minLagBlocks...maxLagBlocks {
                    let start = maxLagBlocks - lag
                    let count = min(n, reference.count - start)
                    guard count >= n / 2 else { continue }
                    let s = sum[start + count] - sum[start]
                    let energy = squares[start + count] - squares[start] - s * s / Double(count)
                    guard energy > 0 else { continue }
                    // The capture is centred, so the reference's mean drops out of the dot product (over
                    // the whole capture; over a partial overlap it is an approximation good enough here).
                    var dot: Float = 0
                    for i in 0..<count { dot += r[start + i] * c[i] }
                    let value = Double(dot) / (energy.squareRoot() * Double(cNorm))
                    if value > (best?.value ?? -1) { best = (lag, value) }
                }
            }
        }
        guard let best, best.value >= minimumCorrelation else { return nil }
        return Double(best.lag) * blockMs
    }

    private static func envelope(_ samples: [Int16], into out: inout [Float]) {
        for start in stride(from: 0, to: samples.count - blockSamples + 1, by: blockSamples) {
            var sum: Float = 0
            for i in start..<start + blockSamples { sum += abs(Float(samples[i])) }
            out.append(sum / Float(blockSamples))
        }
    }
}
