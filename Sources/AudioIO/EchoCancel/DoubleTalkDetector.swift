/// Says when the user speaks over the reply's echo, from how much of the capture the linear stage (Speex's
/// adaptive filter) leaves: `EchoCancellingCapture` then passes the linear stage's output on instead of
/// WebRTC's, which would take the user with the echo.
///
/// Why: WebRTC 0.3's suppressor is close to half-duplex. With the user 8 dB under the echo on the loopback it
/// left them 15 to 40 dB down and neither model found their words, so barge-in never came. The linear filter
/// removes only its estimate of the echo: on echo alone it leaves a steady fraction (about -20 dB once
/// converged), and the user's speech lifts what it leaves well over that (to about -8 dB). Its output then
/// holds the user whole and the echo 20 dB down, which recognition copes with.
///
/// Measured over 100 ms windows while something plays: `echoOnly` is the 30th percentile of what the filter
/// left of loud windows not taken for the user, over the last 3 s. A window is the user's when the filter
/// leaves 8 dB more of it than that (`margin`) but still removes something (`divergedRatio`): a window it
/// leaves whole is a user far louder than the echo, whom WebRTC keeps anyway, or a filter thrown off, whose
/// output would be the echo. Together the two bounds only let a filter that removes over 10 dB of the echo
/// alone hear a user, so one still learning the path (a reply after silence, a reference the aligner just
/// moved) never does.
///
/// Nor is a sentence's onset judged (`ReferenceOnset`): after the reference has been silent for 200 ms, Speex's
/// filter leaves -3 to -15 dB of the echo for up to 800 ms while it settles, on echo alone.
/// In 60 recorded loopback sessions (`bench aec --replay`) every opening the detector made on the reply alone
/// (10 of 10, each passing 10 to 20 leaked frames on) began 180 to 800 ms after such an onset, or in a filter
/// converged so far that 8 dB over its usual was still under `userRatio`; none of the 20 users who spoke over
/// a reply in them opened it (1.5 s into a session's first reply, the filter has not converged yet).
struct DoubleTalkDetector {
    /// Its tuning: `EchoTuning.DoubleTalk`.
    typealias Tuning = EchoTuning.DoubleTalk
    private var raw: [Double] = []
    private var linear: [Double] = []
    private var ratios: [Double] = []
    private var frames = 0
    private var userWindows = 0
    private var hangover = 0
    private var silentFrames = 0
    /// The last loud window's linear-stage-to-raw energy ratio, and the echo-only ratio it was judged
    /// against (nil while settling): for the log line when the detector opens.
    private(set) var lastJudgement: (ratio: Double, echoOnly: Double?)?

    /// The filter's path knowledge no longer holds (the reference moved, playback restarted after silence).
    mutating func reset() {
        ratios.removeAll()
        userWindows = 0
        hangover = 0
    }

    /// Takes one frame's raw capture and the linear stage's output for it; `playing` says whether a reference
    /// sound is around it, `settling` whether the frame is in the first second of a sentence (`ReferenceOnset`).
    /// Returns whether the user is speaking over the echo.
    mutating func add(raw near: [Int16], linear out: [Int16], playing: Bool, settling: Bool = false) -> Bool {
        guard playing else {
            silentFrames += 1
            if silentFrames >= Tuning.restartFrames { reset() }
            hangover = 0
            userWindows = 0
            return false
        }
        silentFrames = 0
        LevelHistory.push(AudioLevel.meanSquare(near), into: &raw, keep: Tuning.windowFrames)
        LevelHistory.push(AudioLevel.meanSquare(out), into: &linear, keep: Tuning.windowFrames)
        frames += 1
        if frames % Tuning.windowFrames == 0 {
            judgeWindow(settling: settling)
        }
        if hangover > 0 {
            hangover -= 1
            return true
        }
        return false
    }

    private mutating func judgeWindow(settling: Bool) {
        let rawEnergy = LevelHistory.mean(raw)
        guard rawEnergy >= Tuning.loudRMS * Tuning.loudRMS else {
            userWindows = 0
            return
        }
        let ratio = LevelHistory.mean(linear) / rawEnergy
        guard !settling else {
            // Neither the user nor echo alone: what the filter leaves here says nothing of either.
            userWindows = 0
            return
        }
        var user = false
        var echoOnly: Double?
        if ratios.count >= Tuning.settleWindows {
            let level = LevelHistory.percentile(ratios, 0.3)
            echoOnly = level
            user = ratio >= max(level * Tuning.margin, Tuning.userRatio) && ratio < Tuning.divergedRatio
        }
        lastJudgement = (ratio, echoOnly)
        if user {
            userWindows += 1
            if userWindows >= Tuning.openingWindows || hangover > 0 { hangover = Tuning.hangoverFrames }
        } else {
            // A filter thrown off counts too: it raises the bar until the filter has learnt the path again.
            userWindows = 0
            LevelHistory.push(ratio, into: &ratios, keep: Tuning.historyWindows)
        }
    }
}
