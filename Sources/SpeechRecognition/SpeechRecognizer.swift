/// A recognised word with its place in the utterance, and the engine's confidence where it gives one.
package struct RecognizedWord: Sendable, Equatable {
    package var word: String
    package var startMs: Int
    package var endMs: Int
    package var confidence: Double?

    package init(word: String, startMs: Int, endMs: Int, confidence: Double? = nil) {
        self.word = word
        self.startMs = startMs
        self.endMs = endMs
        self.confidence = confidence
    }
}

/// What the engine believes was said so far (partial) or in the whole utterance (final).
package struct Hypothesis: Sendable, Equatable {
    package var text: String
    package var words: [RecognizedWord]
    package var confidence: Double?

    package init(text: String, words: [RecognizedWord] = [], confidence: Double? = nil) {
        self.text = text
        self.words = words
        self.confidence = confidence
    }

    package static let empty = Hypothesis(text: "")
}

/// The engine-neutral interface the Talk loop and the benchmark drive; PocketSphinx is one implementation,
/// and another engine can replace it without touching the callers. An engine is loaded once and kept warm:
/// audio is decoded as it arrives, so `endUtterance()` only has to finish the search.
package protocol SpeechRecognizer: Actor {
    /// Begins a new utterance; any previous one is discarded.
    func startUtterance() throws
    /// Feeds 16 kHz mono PCM16 (normally one 20 ms frame). Returns the engine's own voice-activity signal
    /// when it has one, or nil.
    func process(_ samples: [Int16]) throws -> Bool?
    /// The best hypothesis so far, cheap enough to ask after every frame.
    func partial() -> Hypothesis?
    /// Ends the utterance and returns the final hypothesis.
    func endUtterance() throws -> Hypothesis
    /// Drops the utterance in progress without a result.
    func reset()
    /// From the next utterance on, recognise only the sentences of this JSGF grammar (an approval's answers); nil:
    /// back to the engine's own mode. An utterance in progress keeps the search it began with. Throws when the
    /// engine rejects the grammar (the previous choice then stays).
    func useGrammar(_ jsgf: String?) throws
    /// CPU time the engine has spent on its own work so far (the thread time of its calls), so benchmarks count
    /// decoding alone and not whatever else the process does meanwhile.
    func decodeCPUSeconds() -> Double
}

extension SpeechRecognizer {
    /// Feeds `frames` in order in one call on the engine's own executor, and returns the voice signal after the last
    /// with the CPU time the engine spent on them: one trip to the engine's thread for a caller elsewhere, not one for
    /// each frame and two for the CPU clock.
    package func feed(_ frames: [[Int16]]) throws -> (voice: Bool?, cpuSeconds: Double) {
        let before = decodeCPUSeconds()
        var voice: Bool?
        for samples in frames { voice = try process(samples) }
        return (voice, decodeCPUSeconds() - before)
    }
}
