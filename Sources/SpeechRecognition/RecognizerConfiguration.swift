/// Everything needed to build a recogniser: the mode, where models are looked for, and decoder tuning.
package struct RecognizerConfiguration: Sendable, Equatable {
    package var mode: RecognitionMode
    /// Searched first for the acoustic model, dictionary and language model (`--model-dir`).
    package var modelDirectory: String?
    /// The language folder name searched for in each model directory.
    package var language: String
    /// A dictionary to use instead of the one found next to the model.
    package var dictionary: String?
    /// Search settings; nil in `init` picks `DecoderTuning.recommended(for: mode)`.
    package var tuning: DecoderTuning
    /// Until the decoder has heard this much audio (seconds), each utterance no longer than that is decoded
    /// twice: once to adapt the live cepstral mean to the speaker and microphone, once for the result. It fixes
    /// short first commands in grammar mode (a grammar decodes at about 0.03 of real time, so the second pass
    /// costs under 100 ms); it made no difference to dictation WER on the dev set, where a second pass is
    /// five times dearer, so dictation leaves it off. 0 turns it off.
    package var cepstralWarmUpSeconds: Double
    /// How the decoding thread is scheduled: `.live` for the live session's recogniser alone (`DecodingThread`).
    package var decodingThread: DecodingThread

    package init(
        mode: RecognitionMode = .dictation(),
        modelDirectory: String? = nil,
        language: String = "en-us",
        dictionary: String? = nil,
        tuning: DecoderTuning? = nil,
        cepstralWarmUpSeconds: Double? = nil,
        decodingThread: DecodingThread = .normal
    ) {
        self.decodingThread = decodingThread
        self.mode = mode
        self.modelDirectory = modelDirectory
        self.language = language
        self.dictionary = dictionary
        self.tuning = tuning ?? .recommended(for: mode)
        if let cepstralWarmUpSeconds {
            self.cepstralWarmUpSeconds = cepstralWarmUpSeconds
        } else if case .grammar = mode {
            self.cepstralWarmUpSeconds = 3
        } else {
            self.cepstralWarmUpSeconds = 0
        }
    }

    var cepstralWarmUpSamples: Int { Int(max(0, cepstralWarmUpSeconds) * 16_000) }
}
