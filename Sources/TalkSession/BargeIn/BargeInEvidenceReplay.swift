import AudioIO

/// A recorded capture's cleaned frames through the native loop's barge-in evidence, as `MicrophoneGate` takes them (no
/// I/O; `bench aec --replay DIR --evidence`): its sound onsets, the reply lowered at each and restored when the onset
/// hold runs out (`BargeInPolicy.Lowering`), and at the partials' pace (`Partials.overReplyEveryMs`) whether the
/// evidence about an utterance opened at any onset of the last 3 s would let words over the reply stop it
/// (`Evidence.holdReason`, and the energy guard). The recogniser is not replayed: every such moment is one where a
/// partial of three new letters, which dictation makes of the echo's leak now and then, would cut the reply. Before the
/// user's start (or anywhere in a recording of the reply alone) that is the reply cutting itself off; after it, the
/// earliest the evidence lets the user's words count.
package struct BargeInEvidenceReplay {
    private let policy: BargeInPolicy
    private var meter: BargeInEvidenceMeter
    private var energy: SpeechEnergy
    private var loudRun = 0
    private var onsetsMs: [Int] = []
    /// While lowered: when the hold runs out, and the onset it began at.
    private var lowered: (untilMs: Int, onsetMs: Int)?
    /// Stream ms at which the evidence first let words stop the reply, per stretch of sound (a new one after it was quiet).
    package private(set) var allowedMs: [Int] = []
    private var allowedThisSound = false

    package init(policy: BargeInPolicy = BargeInPolicy()) {
        self.policy = policy
        meter = BargeInEvidenceMeter(audibleRMS: policy.energy.minimumRMS)
        energy = SpeechEnergy(policy.energy)
    }

    /// Takes the next frame; `replyPlays`: the reply's sound is in the microphone (from its first reference sound to
    /// where it ended or was cut).
    package mutating func hear(_ frame: AudioFrame, replyPlays: Bool) {
        let nowMs = frame.streamPositionMs + AudioFrame.durationMs
        let loud = energy.add(frame.samples, sequence: frame.sequence)
        meter.add(frame)
        loudRun = loud ? loudRun + 1 : 0
        if loudRun == SpeechEnergy.onsetFrames {
            let onsetSequence = frame.sequence + 1 - UInt64(SpeechEnergy.onsetFrames)
            meter.soundOnset(atSequence: onsetSequence)
            let onsetMs = Int(onsetSequence) * AudioFrame.durationMs
            onsetsMs.append(onsetMs)
            if replyPlays, lowered == nil, let gain = policy.lowering.gain {
                meter.replyPlays(atGain: gain)
                lowered = (nowMs + Self.ms(policy.lowering.onsetHold), onsetMs)
            }
        }
        // Utterances over the reply only: one opened before it (the question) is the loop's turn, not a barge-in.
        if !replyPlays { onsetsMs.removeAll() }
        onsetsMs.removeAll { $0 + BargeInEvidenceMeter.shareFrames * AudioFrame.durationMs < nowMs }
        if let hold = lowered, nowMs >= hold.untilMs {
            let more = hold.onsetMs + Self.ms(policy.lowering.onsetHoldLimit) - nowMs
            if energy.isSpeech, meter.userSoundGoesOn(lastFrames: BargeInEvidenceMeter.holdFrames), more > 0 {
                lowered = (nowMs + min(more, Self.ms(policy.lowering.onsetHold)), hold.onsetMs)
            } else {
                lowered = nil
                meter.replyPlays(atGain: 1)
            }
        }
        if !energy.isSpeech { allowedThisSound = false }
        guard replyPlays, !allowedThisSound, frame.sequence % UInt64(policy.partials.overReplyEveryFrames) == 0, energy.isSpeech
        else { return }
        for onsetMs in onsetsMs {
            let heard = meter.evidence(ofUtteranceAtMs: onsetMs, throughMs: nowMs)
            let evidence = BargeInEvidence(
                echoExplained: heard.echoExplained, speechMs: nowMs - onsetMs,
                startedBeforeReplyAudio: heard.startedBeforeReplyAudio, userSoundShown: heard.userSoundShown)
            if policy.evidence.holdReason(evidence) == nil {
                allowedMs.append(nowMs)
                allowedThisSound = true
                return
            }
        }
    }

    private static func ms(_ duration: Duration) -> Int {
        Int(duration / .milliseconds(1))
    }
}
