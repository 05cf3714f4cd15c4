/// Everything needed to build a recogniser: the mode, where models are looked for, and decoder tuning.
package struct RecognizerConfiguration: Sendable, Equatable {
    package var mode: RecognitionMode
    /// Searched first for the acoustic model, dictionary and language model (`--model-dir`).
    package var modelDirectory: String?
    /// The language folder name searched for in each model directory.
    package var language: String
    /// A dictionary to use instead of the one found next to the model.
    package var dictionary: String?
    package var tuning: DecoderTuning

    package init(
        mode: RecognitionMode = .dictation(), modelDirectory: String? = nil, language: String = "en-us",
        dictionary: String? = nil, tuning: DecoderTuning = .recommended
    ) {
        self.mode = mode
        self.modelDirectory = modelDirectory
        self.language = language
        self.dictionary = dictionary
        self.tuning = tuning
    }
}
