/// How much of each captured frame the reply's own sound explains: the raw capture's energy over 100 ms against
/// the echo the reference predicts for it (the loudest reference frame in the echo's reach, times the coupling
/// learnt from frames the later stages judged echo alone). About 1 on the reply's echo, however the canceller
/// is doing; well under 1 where someone speaks over it. Barge-in counts frames by it (`AudioFrame.echoExplained`),
/// so a misrecognised leak of the echo, which the canceller passed and the recogniser made words of, cannot stop
/// the reply: those frames are still explained by the reference.
///
/// It reads the capture before any canceller, so it holds from the reply's first frame on (the canceller takes
/// seconds to converge; a sentence's onset leaks), and a coupling that changes (the reply lowered, another
/// device) moves the prediction with it, since reference and capture move together.
struct EchoExplanation {
    /// Its tuning: `EchoTuning.Explanation`.
    typealias Tuning = EchoTuning.Explanation

    private var raw: [Double] = []
    private var far: [Double] = []
    private var couplings: [Double] = []

    /// Another device, a restarted server: the path is learnt again.
    mutating func restart() { self = EchoExplanation() }

    /// The fraction (0...1) of the frame's window the reference explains, or nil when nothing played within
    /// the echo's reach (nothing to explain) or the coupling is not learnt yet. `echoAlone`: the later stages took this frame for the echo alone,
    /// so it teaches the coupling.
    mutating func add(raw frame: [Int16], far reference: [Int16], echoAlone: Bool) -> Double? {
        LevelHistory.push(AudioLevel.meanSquare(frame), into: &raw, keep: Tuning.windowFrames)
        LevelHistory.push(AudioLevel.meanSquare(reference), into: &far, keep: Tuning.windowFrames + Tuning.reachFrames)
        let played = far.max() ?? 0
        guard played >= Tuning.playingRMS * Tuning.playingRMS else { return nil }
        let heard = LevelHistory.mean(raw)
        defer { if echoAlone { LevelHistory.push(heard / played, into: &couplings, keep: Tuning.historyFrames) } }
        guard couplings.count >= Tuning.settleFrames else { return nil }
        guard heard > 0 else { return 1 }
        let predicted = LevelHistory.percentile(couplings, Tuning.couplingPercentile) * played
        return min(1, predicted / heard)
    }
}
