/// What the recogniser listens for: free dictation, a fixed command grammar, or only a wake phrase.
package enum RecognitionMode: Sendable, Equatable {
    /// Free speech against an n-gram language model; nil uses the model's generic LM (`en-us.lm.bin`).
    case dictation(languageModel: String? = nil)
    /// Only sentences of a JSGF grammar file. The language model is left out on purpose: PocketSphinx lets
    /// `-lm` silently win over `-jsgf`.
    case grammar(path: String)
    /// Spots one phrase in running speech. `threshold` is the keyphrase detection threshold (PocketSphinx's
    /// `-kws_threshold`, e.g. 1e-20): smaller finds the phrase more readily and false-alarms more often.
    case keyphrase(String, threshold: Double = 1e-20)
    /// Spots any phrase of a keyword list file (one phrase a line, optionally `/threshold/` after it).
    case keywordList(path: String)

    /// A short name for logs and error messages.
    package var name: String {
        switch self {
        case .dictation: return "dictation"
        case .grammar: return "grammar"
        case .keyphrase: return "keyphrase"
        case .keywordList: return "keyword list"
        }
    }
}
