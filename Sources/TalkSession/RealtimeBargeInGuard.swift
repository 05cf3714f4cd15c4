import AudioIO

/// Barge-in over the realtime relay's answer, with the native loop's guards (`TalkSession.considerBargeIn`):
/// - the energy guard: the microphone (already echo-cancelled by `EchoCancellingCapture` when `--aec` is on)
///   must stand `BargeInPolicy.EnergyGuard`'s dB over its noise floor, which the reply's echo raises (`SpeechEnergy`);
/// - the text guard: when the relay transcribes the user as they speak (user partials, or user `transcript`
///   events that are not final), the latest of them, no older than 1.5 s, must hold the policy's letters or digits in
///   words the assistant is not saying (`BargeInTextGuard`), so the answer's own echo, transcribed back, never
///   stops it. A relay that sends no such text leaves Apple's level rule (RMS ≥ 0.08 of full scale) in its
///   place;
/// - the echo evidence: at most `BargeInPolicy.Evidence.maximumEchoExplained` of the audible frames of the last
///   `evidenceFrames` may be the answer's own echo, frame by frame (`BargeInEvidenceMeter`), so residual echo loud
///   enough for the level rule, or transcribed into words, does not stop the answer.
struct RealtimeBargeInGuard {
    /// The frames the echo evidence is taken over (500 ms): about a first word's length.
    static let evidenceFrames = 25
    static let partialFreshNs: UInt64 = 1_500_000_000
    /// What the assistant said is kept this long (characters): enough for a long answer's words.
    static let spokenLimit = 4_000

    private var energy: SpeechEnergy
    private let minimumCharacters: Int
    private var loudest = 0.0
    private(set) var relayTranscribesUser = false
    private var partial: (text: String, atNs: UInt64)?
    private var spoken = ""
    private var evidence: BargeInEvidenceMeter
    private let evidencePolicy: BargeInPolicy.Evidence
    private var lastSequence: UInt64 = 0
    private var loudFrames = 0
    /// When the first loud frame of the sound the microphone hears now came (session clock): where the user's
    /// speech starts as the capture stream saw it, for the barge-in's detection latency. Nil once it is quiet.
    private(set) var soundStartNs: UInt64?

    init(_ policy: BargeInPolicy = BargeInPolicy()) {
        energy = SpeechEnergy(policy.energy)
        minimumCharacters = policy.text.minimumNewCharacters
        evidence = BargeInEvidenceMeter(audibleRMS: policy.energy.minimumRMS)
        evidencePolicy = policy.evidence
    }

    /// Takes the next frame, heard at `atNs`; returns whether it makes an onset (`SpeechEnergy.onsetFrames` loud
    /// frames in a row): sound that may be the user starting to speak, long before the relay can say so.
    @discardableResult
    mutating func hear(_ frame: AudioFrame, atNs: UInt64) -> Bool {
        let samples = frame.samples
        evidence.add(frame)
        lastSequence = frame.sequence
        let loud = energy.add(samples)
        loudest = samples.isEmpty ? 0 : (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
        loudFrames = loud ? loudFrames + 1 : 0
        if loud, soundStartNs == nil { soundStartNs = atNs }
        if !energy.isSpeech { soundStartNs = nil }
        return loudFrames == SpeechEnergy.onsetFrames
    }

    /// Whether the microphone hears sound loud enough over its floor to be speech (the last 300 ms).
    var hearsSound: Bool { energy.isSpeech }

    mutating func userPartial(_ text: String, atNs: UInt64) {
        relayTranscribesUser = true
        partial = (text, atNs)
    }

    mutating func assistantSaid(_ text: String) {
        spoken += " " + text
        if spoken.count > Self.spokenLimit { spoken = String(spoken.suffix(Self.spokenLimit)) }
    }

    /// Whether the last frame heard, with what the relay transcribed, is the user cutting in.
    func isUserSpeech(nowNs: UInt64, levelRMS: Double) -> Bool {
        guard energy.isSpeech else { return false }
        let from = lastSequence >= UInt64(Self.evidenceFrames) ? lastSequence - UInt64(Self.evidenceFrames) : 0
        let heard = evidence.evidence(fromPositionMs: Int(from) * AudioFrame.durationMs + BargeInEvidenceMeter.preRollFrames * AudioFrame.durationMs)
        if let limit = evidencePolicy.maximumEchoExplained, let explained = heard.echoExplained, explained > limit { return false }
        guard relayTranscribesUser else { return loudest >= levelRMS }
        guard let partial, nowNs &- partial.atNs <= Self.partialFreshNs else { return false }
        return BargeInTextGuard.isNewSpeech(partial.text, spoken: spoken, minimumCharacters: minimumCharacters)
    }
}
