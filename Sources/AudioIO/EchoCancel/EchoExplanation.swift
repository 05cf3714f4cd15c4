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

    /// Both readings of one frame (nil: nothing played within the reach, or that reading's coupling is not learnt).
    struct Reading: Equatable {
        /// The raw capture's 100 ms window against the loudest reference frame in the echo's reach (`add`).
        var window: Double?
        /// The frame alone against the loudest reference frame around the echo's lag (`EchoFrameLag`,
        /// `Tuning.closeSpreadFrames` either side), through a coupling of its own: what a dip of the reply as short as a syllable's gap leaves of someone else. The
        /// window reading's reach spans 260 ms of reference, so a user quieter than the echo (the reply lowered for
        /// them, the user 5 dB under it still) is explained whole but in the reply's pauses; the close one shows them
        /// in its gaps. Barge-in reads it only while the reply plays lowered (`BargeInEvidenceMeter`).
        var frame: Double?
    }

    private var raw: [Double] = []
    private var far: [Double] = []
    private var couplings: [Double] = []
    /// The close reading's couplings, one list per reference window it may read (`closeWindows`), each learnt from
    /// the same echo-alone frames: the window follows the echo's lag without learning the path again.
    private var closeCouplings = [[Double]](repeating: [], count: Self.closeWindows.count)
    private var lag = EchoFrameLag()

    /// The reference frames (how many back from the frame's own) the close reading may read: until the echo's lag is
    /// measured all of its reach, then `Tuning.closeSpreadFrames` either side of it.
    static let closeWindows: [ClosedRange<Int>] = [0...Tuning.reachFrames]
        + (0...Tuning.lagMaxFrames).map { max(0, $0 - Tuning.closeSpreadFrames)...$0 + Tuning.closeSpreadFrames }

    /// Another device, a restarted server: the path is learnt again.
    mutating func restart() { self = EchoExplanation() }

    /// The fraction (0...1) of the frame's window the reference explains, or nil when nothing played within
    /// the echo's reach (nothing to explain) or the coupling is not learnt yet. `echoAlone`: the later stages took this frame for the echo alone,
    /// so it teaches the coupling.
    mutating func add(raw frame: [Int16], far reference: [Int16], echoAlone: Bool) -> Double? {
        read(raw: frame, far: reference, echoAlone: echoAlone).window
    }

    /// `add`, with the close reading (`Reading.frame`) beside the window's.
    mutating func read(raw frame: [Int16], far reference: [Int16], echoAlone: Bool) -> Reading {
        let heardNow = AudioLevel.meanSquare(frame)
        LevelHistory.push(heardNow, into: &raw, keep: Tuning.windowFrames)
        LevelHistory.push(AudioLevel.meanSquare(reference), into: &far, keep: Tuning.windowFrames + Tuning.reachFrames)
        lag.add(raw: heardNow, far: far.last ?? 0)
        let played = far.max() ?? 0
        guard played >= Tuning.playingRMS * Tuning.playingRMS else { return Reading() }
        let heard = LevelHistory.mean(raw)
        // In a gap of the reference (nothing audible played that close) the frame is read against the playing level:
        // what the microphone hears there is someone else's, or the echo placed further off than the close window,
        // which then teaches a coupling that large.
        let playedClose = Self.closeWindows.map { window in
            max(window.map { far.count > $0 ? far[far.count - 1 - $0] : 0 }.max() ?? 0, Tuning.playingRMS * Tuning.playingRMS)
        }
        defer {
            if echoAlone {
                LevelHistory.push(heard / played, into: &couplings, keep: Tuning.historyFrames)
                for (i, close) in playedClose.enumerated() {
                    LevelHistory.push(heardNow / close, into: &closeCouplings[i], keep: Tuning.historyFrames)
                }
            }
        }
        let close = lag.lagFrames.map { $0 + 1 } ?? 0
        return Reading(window: Self.explained(heard, by: played, couplings),
                       frame: Self.explained(heardNow, by: playedClose[close], closeCouplings[close]))
    }

    /// The share of `heard` that `played`, through the `couplings`' percentile, predicts (nil: too few learnt).
    private static func explained(_ heard: Double, by played: Double, _ couplings: [Double]) -> Double? {
        guard couplings.count >= Tuning.settleFrames else { return nil }
        guard heard > 0 else { return 1 }
        return min(1, LevelHistory.percentile(couplings, Tuning.couplingPercentile) * played / heard)
    }
}
