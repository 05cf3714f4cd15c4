/// Measures, from the signals themselves, how far the echo in the capture lags the reference fed with it,
/// and says how to move the reference when that lag leaves the window WebRTC's canceller can work in.
///
/// Capture timestamps alone cannot place the reference: they come from the sound server's latency
/// estimates, jitter by ±30 ms and, on a null sink's monitor, slide by tens to hundreds of milliseconds for
/// seconds after playback starts. The echo itself is exact. Every 200 ms this correlates the loudness
/// envelopes (2 ms steps) of the last two seconds of reference and capture over lags of -200 to +500 ms;
/// a clear peak outside `acceptedMs` yields a correction that brings the lag back to `targetMs`.
///
/// Inside the window the lag is held where the canceller converged: a confirmed jump of more than
/// `heldToleranceMs` (a playback underrun on PipeWire's Pulse server inserts one graph quantum, 21.3 ms at
/// 48 kHz, into what plays, which shifts the echo against its reference for the rest of the reply) moves the
/// reference by the jump, measured to the sample on the signals themselves, so the converged filters fit again.
/// After a gap in what the speaker played (`playbackHadGap`), the lag is measured again to the sample around the held
/// one and the reference moved back by any difference, however small; until then no jump moves it, as the playback
/// side places the stream again after an underrun and the reference may already have followed the jump.
struct EchoAligner {
    /// Its tuning: `EchoTuning.Alignment`.
    typealias Tuning = EchoTuning.Alignment

    private var reference: [Float] = []
    private var capture: [Float] = []
    private var frames = 0
    /// An out-of-window lag waiting for a second measurement to confirm it.
    private var pendingLagMs: Double?

    /// The lag last measured with confidence, in milliseconds.
    private(set) var measuredLagMs: Double?
    /// The lag, in samples, the canceller converged on; nil until measured inside the window.
    private(set) var heldLagSamples: Int?
    /// The newest samples of both, for the sample-exact lag.
    private var recentReference: [Int16] = []
    private var recentCapture: [Int16] = []
    /// Capture samples added since the speaker's sound last had a gap, until the lag is measured again after it.
    private var samplesSinceGap: Int?

    /// The speaker's sound had a gap (a playback underrun): the stream was placed again from a timing estimate, so
    /// the echo may now lag the reference a few samples off the held lag, too little for the envelopes to show
    /// (`heldToleranceMs`) but enough that the converged filters cancel little until they learn the path again
    /// (5 s at 15 to 32 dB, seen on PipeWire under load). Once the capture holds echo of sound placed after it, the
    /// samples are compared around the held lag and the reference is moved back to it to the sample.
    mutating func playbackHadGap() {
        samplesSinceGap = 0
        pendingLagMs = nil
    }

    /// A gap was announced and the capture does not yet hold `gapSettleSamples` of echo of sound placed after it:
    /// only `afterGap` may move the reference then.
    private var gapSettling: Bool {
        samplesSinceGap.map { $0 < Tuning.gapSettleSamples } ?? false
    }

    /// Adds one frame of the reference fed to the canceller and of the raw capture; returns how many
    /// nanoseconds later to read the reference from now on, or nil to leave it.
    mutating func add(reference far: [Int16], capture near: [Int16]) -> Int64? {
        Self.envelope(far, into: &reference)
        Self.envelope(near, into: &capture)
        recentReference += far
        recentCapture += near
        let keepReference = Tuning.fineSamples + Tuning.maxLagBlocks * Tuning.blockSamples + Tuning.pitchSearchSamples
        if recentReference.count > keepReference { recentReference.removeFirst(recentReference.count - keepReference) }
        if recentCapture.count > Tuning.fineSamples { recentCapture.removeFirst(recentCapture.count - Tuning.fineSamples) }
        let keep = Tuning.windowBlocks + Tuning.maxLagBlocks
        if reference.count > keep { reference.removeFirst(reference.count - keep) }
        if capture.count > Tuning.windowBlocks { capture.removeFirst(capture.count - Tuning.windowBlocks) }
        frames += 1
        if let move = afterGap(captured: near.count) { return move }
        // While a gap settles the envelopes and samples kept span sound placed before it and after: the playback
        // side places the stream again after an underrun (PulseAudio's estimates follow the gap), so a jump they
        // show may already be undone in the reference, and moving by it too puts the echo before its reference.
        guard !gapSettling else { return nil }
        guard frames % Tuning.everyFrames == 0, reference.count == keep, capture.count == Tuning.windowBlocks,
            let lag = Self.lag(reference: reference, capture: capture)
        else { return nil }
        measuredLagMs = lag
        if let held = heldLagSamples {
            guard abs(lag - Double(held) / Self.samplesPerMs) > Tuning.heldToleranceMs else {
                pendingLagMs = nil
                return nil
            }
            guard let pending = pendingLagMs, abs(pending - lag) <= 6 else {
                pendingLagMs = lag
                return nil
            }
            // The samples must show the jump as well as the envelopes: the echo clearly matches the reference at the
            // new lag and no longer at the held one (at a sound's end the envelopes alone once misled it by 10 ms).
            pendingLagMs = nil
            let now = fineLag(around: lag)
            // The samples put the echo where it was held: the envelopes were a pitch period off, nothing moves.
            if let now, now.correlation >= Tuning.minimumCorrelation,
                abs(Double(now.samples - held) / Self.samplesPerMs) <= Tuning.heldToleranceMs
            {
                return nil
            }
            guard let now, now.correlation >= Tuning.minimumCorrelation,
                now.correlation - (correlation(atSamples: held) ?? 0) >= Tuning.jumpEvidence
            else {
                // Outside the window the envelopes decide, as before a lag was held: an echo the samples cannot
                // place is still brought to where the canceller can work.
                guard !Tuning.acceptedMs.contains(Int(lag.rounded())) else { return nil }
                // Unless the samples still match clearly at the held lag: a steady voice's envelopes match about as
                // well a pitch period off the echo's lag (4 ms for an echo held at 15, outside the window), where the
                // samples match nothing. Trusted, that once moved the reference 56 ms under the converged canceller.
                if (correlation(atSamples: held) ?? 0) >= Tuning.minimumCorrelation { return nil }
                heldLagSamples = nil
                clearHistory()
                return Int64((Double(Tuning.targetMs) - lag) * 1_000_000)
            }
            // Read the reference later by as much as the echo came sooner: it lags the reference by `held` again.
            clearHistory()
            return Int64(held - now.samples) * Int64(EchoReference.nanosecondsPerSample)
        }
        // Where the samples match clearly, they place the echo (the envelopes may be a pitch period off).
        let fine = fineLag(around: lag).flatMap { $0.correlation >= Tuning.minimumCorrelation ? $0 : nil }
        let placed = fine.map { Double($0.samples) / Self.samplesPerMs } ?? lag
        if Tuning.acceptedMs.contains(Int(placed.rounded())) {
            pendingLagMs = nil
            heldLagSamples = fine?.samples
            return nil
        }
        guard let pending = pendingLagMs, abs(pending - placed) <= 6 else {
            pendingLagMs = placed
            return nil
        }
        pendingLagMs = nil
        heldLagSamples = nil
        clearHistory()
        // A reference read x later meets each sound x sooner, so its echo lags it x more. The history before
        // the move no longer lines up.
        return Int64((Double(Tuning.targetMs) - placed) * 1_000_000)
    }

    /// The move (ns) that puts the echo back at the held lag after a gap, once the samples show where it now lags
    /// (a gap in silence, or under the user's voice, waits for the next clear echo); nil meanwhile, and when it is
    /// where it was held.
    private mutating func afterGap(captured: Int) -> Int64? {
        guard let since = samplesSinceGap.map({ $0 + captured }) else { return nil }
        guard let held = heldLagSamples else {
            samplesSinceGap = nil
            return nil
        }
        samplesSinceGap = since
        guard since >= Tuning.gapSettleSamples, frames % Tuning.everyFrames == 0,
            let now = bestLag(within: Tuning.gapSearchSamples, of: held), now.correlation >= Tuning.minimumCorrelation
        else { return nil }
        samplesSinceGap = nil
        guard now.samples != held, now.correlation - (correlation(atSamples: held) ?? 0) >= Tuning.gapEvidence else {
            return nil
        }
        pendingLagMs = nil
        clearHistory()
        return Int64(held - now.samples) * Int64(EchoReference.nanosecondsPerSample)
    }

    private static let samplesPerMs = Double(EchoReference.sampleRate) / 1000

    private mutating func clearHistory() {
        samplesSinceGap = nil
        reference.removeAll(keepingCapacity: true)
        capture.removeAll(keepingCapacity: true)
        recentReference.removeAll(keepingCapacity: true)
        recentCapture.removeAll(keepingCapacity: true)
    }

    /// The lag in samples, within `fineSearchSamples` of `lagMs`, at which the newest `fineSamples` of capture best
    /// match the reference (normalised cross-correlation of the samples themselves), with that correlation; nil
    /// before enough are kept. Where that match is clear, the best within `pitchSearchSamples`: the envelopes' lag
    /// may be a voice's pitch period or two off the echo's, where the samples match less well than at it.
    func fineLag(around lagMs: Double) -> (samples: Int, correlation: Double)? {
        let centre = Int((lagMs * Self.samplesPerMs).rounded())
        guard let near = bestLag(within: Tuning.fineSearchSamples, of: centre) else { return nil }
        guard near.correlation >= Tuning.minimumCorrelation else { return near }
        return bestLag(within: Tuning.pitchSearchSamples, of: centre) ?? near
    }

    private func bestLag(within reach: Int, of centre: Int) -> (samples: Int, correlation: Double)? {
        guard let match = SampleMatch(reference: recentReference, capture: recentCapture, window: Tuning.fineSamples) else {
            return nil
        }
        var best: (samples: Int, correlation: Double)?
        for lag in (centre - reach)...(centre + reach) {
            guard let value = match.correlation(atSamples: lag) else { continue }
            if value > (best?.correlation ?? -.infinity) { best = (lag, value) }
        }
        return best
    }

    /// The normalised correlation of the newest `fineSamples` of capture with the reference `lag` samples earlier
    /// (`SampleMatch`); nil before enough capture is kept.
    func correlation(atSamples lag: Int) -> Double? {
        SampleMatch(reference: recentReference, capture: recentCapture, window: Tuning.fineSamples)?.correlation(atSamples: lag)
    }

    /// The lag in ms at which the capture's envelope best matches the reference's, when the match is clear.
    /// `reference` holds `maxLagBlocks` more (older) blocks than `capture`; both end together in time.
    /// Prefix sums give each lag's reference mean and energy at once, so an estimate costs one pass of
    /// multiply-adds per lag (about 260 000 in all), not a copy per lag: it runs on the capture actor.
    static func lag(reference: [Float], capture: [Float]) -> Double? {
        let n = capture.count
        guard reference.count == n + Tuning.maxLagBlocks, n > 0 else { return nil }
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
                for lag in Tuning.minLagBlocks...Tuning.maxLagBlocks {
                    let start = Tuning.maxLagBlocks - lag
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
        guard let best, best.value >= Tuning.minimumCorrelation else { return nil }
        return Double(best.lag) * Tuning.blockMs
    }

    private static func envelope(_ samples: [Int16], into out: inout [Float]) {
        for start in stride(from: 0, to: samples.count - Tuning.blockSamples + 1, by: Tuning.blockSamples) {
            var sum: Float = 0
            for i in start..<start + Tuning.blockSamples { sum += abs(Float(samples[i])) }
            out.append(sum / Float(Tuning.blockSamples))
        }
    }
}
