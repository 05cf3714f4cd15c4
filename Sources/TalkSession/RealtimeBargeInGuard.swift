/// Barge-in over the realtime relay's answer, with the native loop's guards (`TalkSession.considerBargeIn`):
/// - the energy guard: the microphone (already echo-cancelled by `EchoCancellingCapture` when `--aec` is on)
///   must stand `BargeInPolicy.EnergyGuard`'s dB over its noise floor, which the reply's echo raises (`SpeechEnergy`);
/// - the text guard: when the relay transcribes the user as they speak (user partials, or user `transcript`
///   events that are not final), the latest of them, no older than 1.5 s, must hold the policy's letters or digits in
///   words the assistant is not saying (`BargeInTextGuard`), so the answer's own echo, transcribed back, never
///   stops it. A relay that sends no such text leaves Apple's level rule (RMS ≥ 0.08 of full scale) in its
///   place.
struct RealtimeBargeInGuard {
    static let partialFreshNs: UInt64 = 1_500_000_000
    /// What the assistant said is kept this long (characters): enough for a long answer's words.
    static let spokenLimit = 4_000

    private var energy: SpeechEnergy
    private let minimumCharacters: Int
    private var loudest = 0.0
    private(set) var relayTranscribesUser = false
    private var partial: (text: String, atNs: UInt64)?
    private var spoken = ""

    init(_ policy: BargeInPolicy = BargeInPolicy()) {
        energy = SpeechEnergy(policy.energy)
        minimumCharacters = policy.text.minimumNewCharacters
    }

    mutating func hear(_ samples: [Int16]) {
        energy.add(samples)
        loudest = samples.isEmpty ? 0 : (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

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
        guard relayTranscribesUser else { return loudest >= levelRMS }
        guard let partial, nowNs &- partial.atNs <= Self.partialFreshNs else { return false }
        return BargeInTextGuard.isNewSpeech(partial.text, spoken: spoken, minimumCharacters: minimumCharacters)
    }
}
