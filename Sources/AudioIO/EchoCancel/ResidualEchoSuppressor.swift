/// The last stage of echo cancellation: while something plays, a cleaned frame that does not stand out 6 dB
/// over the echo the canceller is expected to have left is turned down 40 dB, so the reply's residual never opens an
/// utterance, never becomes words, never reaches a relay. The user, louder than that residual, passes.
///
/// Why it is needed: the canceller converges late when a reply starts after silence, later still when its
/// reference is misplaced (on a sink's monitor the echo has been seen 200 ms before the server's timing places
/// it, until `EchoAligner` corrects it; the canceller must then learn the moved path, see `relearn()`).
/// Meanwhile the reply's first syllables come through nearly whole, and a dictation model hears new words in
/// them, which the text guard cannot tell from the user's.
///
/// The expected residual is `coupling × played × attenuation`, each measured over 100 ms windows:
/// - `played`: the loudest 20 ms of the reference within 300 ms either side of the frame (misplacement and
///   ringing included);
/// - `coupling`: how loud the raw capture is against `played` (the 70th percentile: about 0 with headphones or
///   a file for a microphone, about 1 on a loopback);
/// - `attenuation`: what the canceller leaves of loud raw windows, its 30th percentile over the last second,
///   which follows its convergence within a few hundred milliseconds (a converged canceller leaves 40 to 60 dB
///   less than the raw echo on the loopback, an unconverged one nearly all of it).
/// Both come from the last windows that did not stand out, so the user's speech cannot raise the bar it is
/// measured against; a frame stands out when it is 6 dB over that residual and audible at all. Until
/// `settleWindows` have been seen the whole raw capture counts as echo: nothing passes for the first 300 ms of
/// a reply after silence. A sentence's onset still leaks for a window or two while its
/// reference settles (measured: about -12 dB of the raw echo for 20 to 40 ms), so a frame only opens the
/// microphone when it is the third in a row to stand out; the two before it are lost (40 ms of the user's first
/// syllable), little next to what the canceller itself takes from the user in double talk. A run that begins in a
/// sentence's first second (`ReferenceOnset`) must be longer (`settlingOpeningRun`): WebRTC leaks runs of the
/// onset's echo there. A run that began before it did not start with the sentence, so it is not that leak: it is
/// the user, who began in the pause or just before the sentence reached the microphone, and it opens as elsewhere.
struct ResidualEchoSuppressor {
    /// Its tuning: `EchoTuning.Residual`.
    typealias Tuning = EchoTuning.Residual

    private var raw: [Double] = []
    private var cleaned: [Double] = []
    /// The reference fed with the last 300 ms of frames: playing before the frame, where an echo normally is.
    private var before: [Double] = []
    private var couplings: [Double] = []
    private var attenuations: [Double] = []
    private var hangover = 0
    private var run = 0
    /// The current run of standing-out frames began in a sentence's first second: it needs the longer run to open.
    private var strictRun = false
    private var silentFrames = 0
    /// The last frame was turned down: taken for the echo alone (or, nothing playing, passed whole: false).
    private(set) var mutedLast = false

    /// The reference was moved under the canceller (`EchoAligner`): it must reconverge, so what it leaves is
    /// learnt again from the next windows, and nothing passes until then.
    mutating func relearn() {
        attenuations.removeAll()
        hangover = 0
        run = 0
    }

    /// Judges one frame: `far` is the reference fed to the canceller with it, `playedAround` the loudest 20 ms
    /// of reference around it (see `AudioLevel.loudestFrameRMS`). Returns `cleaned`, or it 40 dB down.
    mutating func pass(far: [Int16], playedAround: Double, raw near: [Int16], cleaned out: [Int16], settling: Bool = false) -> [Int16] {
        mutedLast = false
        LevelHistory.push(AudioLevel.meanSquare(near), into: &raw, keep: Tuning.windowFrames)
        LevelHistory.push(AudioLevel.meanSquare(out), into: &cleaned, keep: Tuning.windowFrames)
        LevelHistory.push(AudioLevel.meanSquare(far), into: &before, keep: 15)
        guard playedAround >= Tuning.playingRMS else {
            silentFrames += 1
            hangover = 0
            run = 0
            if silentFrames >= Tuning.restartFrames {
                couplings.removeAll()
                attenuations.removeAll()
            }
            return out
        }
        silentFrames = 0
        let played = playedAround * playedAround
        let (rawEnergy, cleanedEnergy) = (LevelHistory.mean(raw), LevelHistory.mean(cleaned))
        let loud = rawEnergy >= Tuning.loudRMS * Tuning.loudRMS
        // Counted: an echo may be in this window (its reference played just before, or the capture is loud).
        let counted = (before.max() ?? 0) >= Tuning.playingRMS * Tuning.playingRMS || loud
        let residual: Double
        let coupling = couplings.count >= Tuning.settleWindows ? LevelHistory.percentile(couplings, Tuning.couplingPercentile) : nil
        if let coupling, attenuations.count >= Tuning.settleWindows {
            residual = coupling * played * LevelHistory.percentile(attenuations, Tuning.attenuationPercentile)
        } else if let coupling, coupling < Tuning.noEchoCoupling {
            // Headphones, or a file for a microphone: there is no echo for the canceller to learn from.
            residual = coupling * played
        } else {
            // The canceller's attenuation is not known yet: the whole raw capture may be echo.
            residual = rawEnergy
        }
        let standsOut = cleanedEnergy >= max(residual * Tuning.margin, Tuning.audibleRMS * Tuning.audibleRMS)
        run = standsOut ? run + 1 : 0
        if run == 1 { strictRun = settling }
        if run >= (strictRun ? Tuning.settlingOpeningRun : Tuning.openingRun) { hangover = Tuning.hangoverFrames }
        if standsOut || hangover > 0 {
            if !standsOut { hangover -= 1 }
            if hangover > 0 { return out }
            mutedLast = true
            return Self.muted(out)
        }
        if counted {
            LevelHistory.push(rawEnergy / played, into: &couplings, keep: Tuning.historyWindows)
            if loud { LevelHistory.push(min(1, cleanedEnergy / rawEnergy), into: &attenuations, keep: Tuning.historyWindows) }
        }
        mutedLast = true
        return Self.muted(out)
    }

    private static func muted(_ samples: [Int16]) -> [Int16] {
        samples.map { Int16(Int32($0) / Tuning.mutedGain) }
    }
}
