import Foundation

/// Where the echo sits behind the reference fed with it, in whole 20 ms frames, from the frames' loudness alone (no
/// I/O): the close reading (`EchoExplanation.Reading.frame`) reads each frame against the reference that made its echo,
/// and the placement does not put it at one lag. The aligner (`EchoAligner`) keeps the echo anywhere in the canceller's
/// window (`EchoTuning.Alignment.acceptedMs`, 15 to 140 ms): on PulseAudio's loopback 20 ms behind, on PipeWire 40 to
/// 80 ms. A reference read 0 to 40 ms back missed PipeWire's echo at each word's end (the reference silent, its echo
/// still loud) and read the echo alone as someone else's.
///
/// Every `Tuning.lagEveryFrames` it correlates the raw capture's loudness (dB) over the last `Tuning.lagHistoryFrames`
/// with the reference's at each lag up to `Tuning.lagMaxFrames`, and takes the best where it is clear. A frame's
/// loudness in dB follows the reply's syllables and pauses whatever the coupling, and the user over it moves the peak's
/// height, not its place.
struct EchoFrameLag {
    /// Its tuning: `EchoTuning.Explanation`.
    typealias Tuning = EchoTuning.Explanation

    private var raw: [Double] = []
    private var far: [Double] = []
    private var playing: [Bool] = []
    private var added = 0

    /// The echo's lag behind the reference, in whole frames (nil until measured).
    private(set) var lagFrames: Int?

    /// Adds one frame's energies (mean squares) of the raw capture and of the reference fed with it.
    mutating func add(raw heard: Double, far played: Double) {
        let floor = Tuning.playingRMS * Tuning.playingRMS
        LevelHistory.push(10 * log10(max(heard, floor)), into: &raw, keep: Tuning.lagHistoryFrames)
        LevelHistory.push(10 * log10(max(played, floor)), into: &far, keep: Tuning.lagHistoryFrames + Tuning.lagMaxFrames)
        playing.append(played >= floor)
        if playing.count > Tuning.lagHistoryFrames + Tuning.lagMaxFrames { playing.removeFirst() }
        added += 1
        guard added % Tuning.lagEveryFrames == 0, raw.count == Tuning.lagHistoryFrames,
              far.count == Tuning.lagHistoryFrames + Tuning.lagMaxFrames,
              playing.count(where: { $0 }) >= Tuning.lagPlayingFrames else { return }
        var best: (lag: Int, correlation: Double)?
        for lag in 0...Tuning.lagMaxFrames {
            let start = Tuning.lagMaxFrames - lag
            let correlation = Self.correlation(raw, Array(far[start..<start + Tuning.lagHistoryFrames]))
            if correlation > best?.correlation ?? -1 { best = (lag, correlation) }
        }
        if let best, best.correlation >= Tuning.lagMinimumCorrelation { lagFrames = best.lag }
    }

    /// Pearson's correlation of two series of the same length (0 where either is flat).
    private static func correlation(_ x: [Double], _ y: [Double]) -> Double {
        let n = Double(x.count)
        let mx = x.reduce(0, +) / n
        let my = y.reduce(0, +) / n
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for (a, b) in zip(x, y) {
            sxy += (a - mx) * (b - my)
            sxx += (a - mx) * (a - mx)
            syy += (b - my) * (b - my)
        }
        guard sxx > 0, syy > 0 else { return 0 }
        return sxy / (sxx * syy).squareRoot()
    }
}
