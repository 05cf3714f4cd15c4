import Foundation
import TalkLogging

/// A `SpeechRecognizer` backed by PocketSphinx. The decoder is built once in `init` and kept warm: between
/// utterances only `ps_start_utt`/`ps_end_utt` run, so cepstral-mean state carries over from one utterance to
/// the next, and every frame is decoded as it arrives, leaving only the search's final pass for
/// `endUtterance()`.
package actor PocketSphinxRecognizer: SpeechRecognizer {
    package nonisolated let configuration: RecognizerConfiguration
    /// The model files in use.
    package nonisolated let models: ModelPaths
    private let decoder: PocketSphinxDecoder
    private let logger: Logger
    private var inUtterance = false

    /// Finds the models and builds the decoder. Throws `SpeechRecognitionError` when a model, grammar or
    /// keyword list is missing or rejected.
    package init(configuration: RecognizerConfiguration, logger: Logger) throws {
        let locator = ModelLocator(modelDirectory: configuration.modelDirectory, language: configuration.language)
        let models = try locator.locate(for: configuration.mode, dictionary: configuration.dictionary)
        let arguments = try DecoderArguments.make(configuration: configuration, models: models)
        let started = ContinuousClock.now
        self.decoder = try PocketSphinxDecoder(arguments: arguments, mode: configuration.mode)
        self.configuration = configuration
        self.models = models
        self.logger = logger
        logger.debug(
            "PocketSphinx decoder ready",
            metadata: [
                "speech.mode": "\(configuration.mode.name)", "speech.acoustic_model": "\(models.acousticModel)",
                "speech.init_ms": "\((ContinuousClock.now - started).milliseconds)",
            ])
    }

    package func startUtterance() throws {
        if inUtterance { try? decoder.endUtterance() }
        inUtterance = false
        try decoder.startUtterance()
        inUtterance = true
    }

    package func process(_ samples: [Int16]) throws -> Bool? {
        guard inUtterance else { throw SpeechRecognitionError.notInUtterance(operation: "process") }
        try decoder.process(samples)
        return decoder.inSpeech
    }

    package func partial() -> Hypothesis? {
        guard inUtterance else { return nil }
        let text = decoder.hypothesisText()
        return text.isEmpty ? nil : Hypothesis(text: text)
    }

    package func endUtterance() throws -> Hypothesis {
        guard inUtterance else { throw SpeechRecognitionError.notInUtterance(operation: "endUtterance") }
        inUtterance = false
        try decoder.endUtterance()
        let text = decoder.hypothesisText()
        guard !text.isEmpty else { return .empty }
        return Hypothesis(text: text, words: decoder.segments(), confidence: decoder.hypothesisProbability())
    }

    package func reset() {
        guard inUtterance else { return }
        inUtterance = false
        try? decoder.endUtterance()
    }
}

extension Duration {
    /// Whole milliseconds, for logs and measurements.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
