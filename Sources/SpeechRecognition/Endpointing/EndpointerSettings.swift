/// How the endpointer decides that speech has started and ended. Durations are in milliseconds of audio;
/// levels are in dB relative to full scale (dBFS) of a frame's RMS after its DC offset is removed.
package struct EndpointerSettings: Sendable, Equatable {
    /// Voiced audio needed before an utterance is declared started; shorter clicks and knocks are ignored.
    package var speechToStartMs: Int
    /// Silence that closes an utterance (OpenClaw desktop's `silenceMs`).
    package var silenceMs: Int
    /// Audio kept from before the detected start and handed to the recogniser, so a soft first consonant
    /// is not clipped.
    package var preRollMs: Int
    /// A longer monologue is cut here; the next utterance continues from the following frame.
    package var maxUtteranceMs: Int
    /// A frame counts as the start of speech when it is this far above the noise floor.
    package var startMarginDb: Double
    /// Once speech has started, frames stay "speech" down to `startMarginDb - hysteresisDb` above the floor,
    /// so word endings and soft syllables do not chop an utterance.
    package var hysteresisDb: Double
    /// Nothing quieter than this starts speech, however quiet the room (digital silence has no floor).
    package var minimumSpeechDbfs: Double
    /// Gaps this short inside the start window do not reset it (plosives, pauses between syllables).
    package var startGapToleranceMs: Int
    /// How fast the noise-floor estimate may rise while no one speaks; it falls almost at once.
    package var floorRiseDbPerSecond: Double
    /// The same while speech goes on: slow, so speech itself is not learnt as noise.
    package var floorRiseInSpeechDbPerSecond: Double
    /// When true, the recogniser's own voice-activity signal keeps an utterance open for frames that are
    /// above the floor but below the energy threshold.
    package var useRecognizerVoiceActivity: Bool

    package init(
        speechToStartMs: Int = 250, silenceMs: Int = 700, preRollMs: Int = 400, maxUtteranceMs: Int = 30_000,
        startMarginDb: Double = 10, hysteresisDb: Double = 4, minimumSpeechDbfs: Double = -55,
        startGapToleranceMs: Int = 200, floorRiseDbPerSecond: Double = 3, floorRiseInSpeechDbPerSecond: Double = 0.5,
        useRecognizerVoiceActivity: Bool = false
    ) {
        self.speechToStartMs = speechToStartMs
        self.silenceMs = silenceMs
        self.preRollMs = preRollMs
        self.maxUtteranceMs = maxUtteranceMs
        self.startMarginDb = startMarginDb
        self.hysteresisDb = hysteresisDb
        self.minimumSpeechDbfs = minimumSpeechDbfs
        self.startGapToleranceMs = startGapToleranceMs
        self.floorRiseDbPerSecond = floorRiseDbPerSecond
        self.floorRiseInSpeechDbPerSecond = floorRiseInSpeechDbPerSecond
        self.useRecognizerVoiceActivity = useRecognizerVoiceActivity
    }

    package static let `default` = EndpointerSettings()

    /// Frames (of 20 ms) for a duration, at least one.
    static func frames(_ ms: Int) -> Int { max(1, (ms + 19) / 20) }

    /// Checks the values make sense together; the message names the setting and what it needs.
    package func validated() throws -> EndpointerSettings {
        func fail(_ s: String) -> EndpointerError { .invalidSettings(s) }
        if speechToStartMs < 20 { throw fail("speechToStartMs is \(speechToStartMs); it needs at least 20 (one frame)") }
        if silenceMs < 100 { throw fail("silenceMs is \(silenceMs); it needs at least 100") }
        if preRollMs < 0 { throw fail("preRollMs is \(preRollMs); it cannot be negative") }
        if maxUtteranceMs < 1000 { throw fail("maxUtteranceMs is \(maxUtteranceMs); it needs at least 1000") }
        if hysteresisDb < 0 || hysteresisDb > startMarginDb {
            throw fail("hysteresisDb is \(hysteresisDb); it must lie between 0 and startMarginDb (\(startMarginDb))")
        }
        return self
    }
}

/// A problem with endpointing settings.
package enum EndpointerError: Error, Equatable, CustomStringConvertible {
    case invalidSettings(String)

    package var description: String {
        switch self {
        case .invalidSettings(let why): return "Invalid endpointing settings: \(why)."
        }
    }
}
