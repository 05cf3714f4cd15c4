import Foundation

/// Turns a configuration and the located model files into PocketSphinx's argv-style arguments.
/// Each name appears once: strict parsing rejects duplicates.
enum DecoderArguments {
    static func make(configuration: RecognizerConfiguration, models: ModelPaths) throws -> [String] {
        var args = ["-hmm", models.acousticModel, "-dict", models.dictionary, "-samprate", "16000"]
        // The configuration table and progress lines go straight to the log file; errors still reach
        // PocketSphinxLog through its callback.
        args += ["-logfn", "/dev/null"]
        // The phone loop a grammar's result is checked against (`OutOfGrammarCheck`) uses context-independent phones:
        // with triphones PocketSphinx 5prealpha's allphone search grew to 2.2 GB and took about 20 s per answer; with
        // these it adds about 4 MB of peak memory and 80 ms per answer (a C harness of the same decoder: 100.7 vs 105.1
        // MB peak RSS, 21 vs 103 ms per clip; `OutOfGrammarCheck` has the rates). No other search reads this option.
        args += ["-allphone_ci", "yes"]
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
