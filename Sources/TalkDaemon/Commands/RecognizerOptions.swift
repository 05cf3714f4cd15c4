import SpeechRecognition

/// The recogniser options shared by `transcribe` and `bench speech`: the mode and where models are found.
struct RecognizerOptions: Sendable {
    static let grammar = OptionSpec.option("grammar", value: "file.gram", help: "Recognise only sentences of this JSGF grammar.")
    static let keyphrase = OptionSpec.option("keyphrase", value: "text", help: "Listen only for this wake phrase.")
    static let modelDirectory = OptionSpec.option(
        "model-dir", value: "dir", help: "Look for the acoustic model, dictionary and language model here first.")

    var configuration: RecognizerConfiguration

    init(_ parsed: ParsedArguments) throws {
        let grammar = parsed.option("grammar")
        let keyphrase = parsed.option("keyphrase")
        if grammar != nil, keyphrase != nil {
            throw ValidationError("'--grammar' and '--keyphrase' cannot be used together; choose one mode")
        }
        let mode: RecognitionMode
        if let grammar {
            mode = .grammar(path: grammar)
        } else if let keyphrase {
            guard !keyphrase.allSatisfy(\.isWhitespace) else { throw ValidationError("'--keyphrase' needs at least one word") }
            mode = .keyphrase(keyphrase.lowercased())
        } else {
            mode = .dictation()
        }
        configuration = RecognizerConfiguration(mode: mode, modelDirectory: parsed.option("model-dir"), tuning: .streaming(for: mode))
    }
}
