/// Keeps the first frames of a user who starts speaking over the reply, which `ResidualEchoSuppressor` would turn
/// down while its run of standing-out frames builds up (its third frame opens it) and `DoubleTalkDetector` (100 ms
/// windows, two in a row) has not heard yet: on such a frame the linear stage's output is passed on instead.
///
/// A frame is the user's onset when the linear stage leaves 10 dB more of it than it usually leaves of the echo
/// alone (`openMargin`, over the 30th percentile of the last 3 s of loud frames) and WebRTC kept it too (its
/// output within 6 dB of the linear stage's): the two filters agree that something besides the echo is there, and
/// only the suppressor's run rule holds it. The next frames pass the linear output as long as it stays 4 dB over
/// that usual (`holdMargin`), at most `keptFrames` in all, by which time the suppressor's own run has opened.
/// Why: the recogniser needs a word's first 40 ms; on the 120 recorded barge-ins of 6 Dec (`bench aec --replay`)
/// those frames were lost in nearly every trial and "go" came out first in 60, with this 73, while the echo alone
/// in the same recordings passed no frame more (neither filter leaves a frame of the echo alone standing out so).
///
/// Most onsets it still does not keep, and no bound can be eased to keep them: frames of the echo alone that the
/// suppressor turns down show the same levels as the user's first frames. The user's frames that WebRTC kept stand
/// 4 to 23 dB over the usual, and where the user is louder than the echo at that instant the linear stage leaves
/// them whole, which is also what a filter thrown off does (the `divergedRatio` bound); WebRTC's output of such echo
/// stands as far over the suppressor's expected residual (up to 60 dB) as the user's. Each bound eased alone lets more
/// frames of the echo alone through than of users' onsets (66 barge-ins and 20 self-echo sessions replayed, 7 Dec:
/// as it stands 8 echo frames against 3 onset frames; without the diverged bound 46 against 30; a 6 dB margin 16
/// against 4; WebRTC within 8 dB 21 against 7). The frames WebRTC itself takes down (the first 1 to 3, about half
/// of the onset frames lost) are in the linear stage's output, if anywhere, with the echo about as loud as the user:
/// telling them from echo needs the frames after them, which a stage that passes each frame as it comes lacks.
struct UserOnsetKeeper {
    /// Its tuning: `EchoTuning.UserOnset`.
    typealias Tuning = EchoTuning.UserOnset

    private var ratios: [Double] = []
    private var left = 0

    /// The reference moved or playback restarted: what the linear stage usually leaves is learnt again.
    mutating func reset() {
        ratios.removeAll()
        left = 0
    }

    /// Takes one frame's raw capture and both stages' outputs; `muted` says whether the suppressor turned it down,
    /// `userOverEcho` whether the double-talk detector already passes the linear output. Returns whether the frame
    /// should pass the linear output.
    mutating func keep(raw: [Int16], linear: [Int16], cancelled: [Int16], playing: Bool, muted: Bool, userOverEcho: Bool) -> Bool {
        let rawEnergy = AudioLevel.meanSquare(raw)
        guard playing, rawEnergy >= Tuning.loudRMS * Tuning.loudRMS else {
            left = 0
            return false
        }
        let linearEnergy = AudioLevel.meanSquare(linear)
        let ratio = max(linearEnergy / rawEnergy, Tuning.floorRatio)
        if ratios.count >= Tuning.settleFrames {
            let usual = LevelHistory.percentile(ratios, Tuning.usualPercentile)
            let standsOut = ratio < EchoTuning.DoubleTalk.divergedRatio
            if left > 0, standsOut, ratio >= usual * Tuning.holdMargin {
                left -= 1
                return true
            }
            left = 0
            let bothKeep = AudioLevel.meanSquare(cancelled) * Tuning.webRTCKeptRatio >= linearEnergy
            if standsOut, ratio >= usual * Tuning.openMargin, muted, bothKeep, !userOverEcho {
                left = Tuning.keptFrames - 1
                return true
            }
        }
        LevelHistory.push(ratio, into: &ratios, keep: Tuning.historyFrames)
        return false
    }
}
