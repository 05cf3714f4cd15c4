import Foundation

/// Turns a configuration and the located model files into PocketSphinx's argv-style arguments.
/// Each name appears once: strict parsing rejects duplicates.
enum DecoderArguments {
    static func make(configuration: RecognizerConfiguration, models: ModelPaths) throws -> [String] {
        var args = ["-hmm", models.acousticModel, "-dict", models.dictionary, "-samprate", "16000"]
        // The configuration table and progress lines go straight to the log file; errors still reach
        // PocketSphinxLog through its callback.
        args += ["-logfn", "/dev/null"]
        switch configuration.mode {
        case .dictation:
            if let lm = models.languageModel { args += ["-lm", lm] }
        case .grammar(let path):
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw SpeechRecognitionError.grammarNotFound(path: path)
            }
            args += ["-jsgf", path]
        case .keyphrase(let phrase, let threshold):
            args += ["-keyphrase", phrase.lowercased(), "-kws_threshold", String(threshold)]
        case .keywordList(let path):
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw SpeechRecognitionError.keywordListNotFound(path: path)
            }
            args += ["-kws", path]
        }
        for (name, value) in configuration.tuning.arguments { args += [name, value] }
        return args
    }
}
