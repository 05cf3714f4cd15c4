import AudioIO

/// Barge-in over the realtime relay's answer, with the native loop's guards (`TalkSession.considerBargeIn`):
/// - the energy guard: the microphone (already echo-cancelled by `EchoCancellingCapture` when `--aec` is on)
///   must stand `BargeInPolicy.EnergyGuard`'s dB over its noise floor, which the reply's echo raises (`SpeechEnergy`);
/// - the text guard: when the relay transcribes the user as they speak (user partials, or user `transcript`
///   events that are not final), the latest of them, no older than 1.5 s, must hold the policy's letters or digits in
///   words the assistant is not saying (`BargeInTextGuard`), and at most `BargeInPolicy.Evidence.maximumEchoExplained`
///   of the audible frames of the last `evidenceFrames` may be the answer's own echo, so the answer's echo,
///   transcribed back, never stops it;
/// - the sound rule, when the relay sends no such text: the user's own sound (`BargeInEvidenceMeter.userSound`:
///   audible frames in a row the answer's audio does not explain, frame by frame) must span
///   `minimumUserSoundMs` to its latest such frame, within sound that stayed over the floor since, and at most
///   `maximumEchoExplained` of the audible frames from its start on may be the answer's echo. Its level does not
///   matter: a user across the room is as much a user. Without a canceller's measure on echo-cancelled capture
///   (`--aec pulse`, or nothing audible measured yet) Apple's level rule (RMS ≥ `Settings.bargeInRMS`) stands in.
///
/// Without echo cancellation (`--aec off`) nothing the microphone hears over the answer stops it: the answer's own
/// sound reaches the microphone as loud as a user, nothing measures it against what was played, and a level rule
/// cuts the answer on its own echo. Apple's voice apps are half duplex when capture cannot cancel echo; so is
/// `RealtimeTalkSession` then (`Settings.halfDuplex`).
struct RealtimeBargeInGuard {
    /// The frames the text path's echo evidence is taken over (500 ms): about a first word's length.
    static let evidenceFrames = 25
    /// The user's own sound must span this long (ms, from its first frame to its latest) before it stops the answer,
    /// when the relay sends no words to judge: LiveKit's minimum interruption duration (`min_interruption_duration`),
    /// shorter than its 500 ms default. A click or a knock is shorter than 160 ms; a syllable is not. On the loopback
    /// (`bench talk --mode realtime`) the path from the user's first sound to this decision already takes about
    /// 370 ms of the 600 ms detection p95, so 500 ms would put detection near 900 ms; the echo is told apart
    /// by its frames (`BargeInEvidenceMeter`), not by the duration: in the 20 recorded self-echo sessions with echo
    /// cancellation no audible frame of the answer's echo went unexplained.
    static let minimumUserSoundMs = 160
    static let partialFreshNs: UInt64 = 1_500_000_000
    /// What the assistant said is kept this long (characters): enough for a long answer's words.
    static let spokenLimit = 4_000

    private var energy: SpeechEnergy
    private let minimumCharacters: Int
    private let minimumUserSoundMs: Int
    /// Whether the microphone's frames are echo-cancelled (`--aec webrtc` or `pulse`).
    private let echoCancelled: Bool
    private var loudest = 0.0
    private(set) var relayTranscribesUser = false
    private var partial: (text: String, atNs: UInt64)?
    private var spoken = ""
    private var evidence: BargeInEvidenceMeter
    private let evidencePolicy: BargeInPolicy.Evidence
    private var lastSequence: UInt64 = 0
    private var loudFrames = 0
    private let audibleRMS: Double
    /// The last audible frame the answer's audio did not explain: where the user's own sound stands so far.
    private var lastOwnSequence: UInt64?
    /// The first loud frame of the sound the microphone hears now; nil once it is quiet.
    private var soundFrom: (sequence: UInt64, atNs: UInt64)?
    /// When each of the last `BargeInEvidenceMeter.shareFrames` frames came (session clock), by sequence.
    private var frameTimes: [(sequence: UInt64, atNs: UInt64)] = []

    init(_ policy: BargeInPolicy = BargeInPolicy(), minimumUserSoundMs: Int = Self.minimumUserSoundMs, echoCancelled: Bool = true) {
        self.echoCancelled = echoCancelled
        energy = SpeechEnergy(policy.energy)
        minimumCharacters = policy.text.minimumNewCharacters
        evidence = BargeInEvidenceMeter(audibleRMS: policy.energy.minimumRMS)
        evidencePolicy = policy.evidence
        self.minimumUserSoundMs = minimumUserSoundMs
        audibleRMS = policy.energy.minimumRMS
    }

    /// Takes the next frame, heard at `atNs`; returns whether it makes an onset (`SpeechEnergy.onsetFrames` loud
    /// frames in a row): sound that may be the user starting to speak, long before the relay can say so.
    @discardableResult
    mutating func hear(_ frame: AudioFrame, atNs: UInt64) -> Bool {
        let samples = frame.samples
        evidence.add(frame)
        lastSequence = frame.sequence
        frameTimes.append((frame.sequence, atNs))
        if frameTimes.count > BargeInEvidenceMeter.shareFrames { frameTimes.removeFirst(frameTimes.count - BargeInEvidenceMeter.shareFrames) }
        let loud = energy.add(samples)
        loudest = AudioLevel.rms(samples)
        loudFrames = loud ? loudFrames + 1 : 0
        if loudest >= audibleRMS, (frame.echoExplained ?? 0) < BargeInEvidenceMeter.explainedFrame { lastOwnSequence = frame.sequence }
        if loud, soundFrom == nil { soundFrom = (frame.sequence, atNs) }
        if !energy.isSpeech { soundFrom = nil }
        return loudFrames == SpeechEnergy.onsetFrames
    }

    /// Whether the microphone hears sound loud enough over its floor to be speech (the last 300 ms).
    var hearsSound: Bool { energy.isSpeech }

    /// Where the user's speech starts as the capture stream saw it (session clock), for the barge-in's detection
    /// latency: the user's own sound where the sound rule found it, else the first loud frame of the sound heard
    /// now. Nil once it is quiet.
    var soundStartNs: UInt64? {
        guard let soundFrom else { return nil }
        if !relayTranscribesUser, case .from(let sequence) = ownSound(),
           let time = frameTimes.first(where: { $0.sequence == sequence }) {
            return time.atNs
        }
        return soundFrom.atNs
    }

    mutating func userPartial(_ text: String, atNs: UInt64) {
        relayTranscribesUser = true
        partial = (text, atNs)
    }

    /// The user's utterance closed (the relay's final): its words are no evidence of speech over the answer it asked for.
    mutating func userFinal() { partial = nil }

    mutating func assistantSaid(_ text: String) {
        spoken += " " + text
        if spoken.count > Self.spokenLimit { spoken = String(spoken.suffix(Self.spokenLimit)) }
    }

    /// Whether the last frame heard, with what the relay transcribed, is the user cutting in.
    func isUserSpeech(nowNs: UInt64, levelRMS: Double) -> Bool {
        guard echoCancelled, energy.isSpeech else { return false }
        guard relayTranscribesUser else { return isUserSound(levelRMS: levelRMS) }
        let from = lastSequence >= UInt64(Self.evidenceFrames) ? lastSequence - UInt64(Self.evidenceFrames) : 0
        let heard = evidence.evidence(fromPositionMs: Int(from) * AudioFrame.durationMs + BargeInEvidenceMeter.preRollFrames * AudioFrame.durationMs)
        if let limit = evidencePolicy.maximumEchoExplained, let explained = heard.echoExplained, explained > limit { return false }
        guard let partial, nowNs &- partial.atNs <= Self.partialFreshNs else { return false }
        return BargeInTextGuard.isNewSpeech(partial.text, spoken: spoken, minimumCharacters: minimumCharacters)
    }

    /// The sound rule (see the type's comment).
    private func isUserSound(levelRMS: Double) -> Bool {
        switch ownSound() {
        case .unknown:
            return loudest >= levelRMS
        case .echoOnly:
            return false
        case .from(let sequence):
            // Measured to their last frame of their own, not to now: the energy guard's window outlasts a knock.
            guard let lastOwnSequence, lastOwnSequence >= sequence,
                  Int(lastOwnSequence - sequence + 1) * AudioFrame.durationMs >= minimumUserSoundMs else { return false }
            guard let limit = evidencePolicy.maximumEchoExplained else { return true }
            let startMs = Int(sequence) * AudioFrame.durationMs
            guard let explained = evidence.evidence(ofUtteranceAtMs: startMs, throughMs: nil).echoExplained else { return true }
            return explained <= limit
        }
    }

    private enum OwnSound { case unknown, echoOnly, from(sequence: UInt64) }

    /// Where, in the sound heard now (its last 3 s at most), the user's own sound begins.
    private func ownSound() -> OwnSound {
        guard let soundFrom else { return .unknown }
        let kept = UInt64(BargeInEvidenceMeter.shareFrames)
        let first = max(soundFrom.sequence, lastSequence >= kept ? lastSequence - kept + 1 : 0)
        switch evidence.userSound(fromPositionMs: Int(first) * AudioFrame.durationMs) {
        case .unknown: return .unknown
        case .echoOnly: return .echoOnly
        case .from(let ms): return .from(sequence: UInt64(ms / AudioFrame.durationMs))
        }
    }
}
