/// What went wrong setting up or running a recogniser; each description says what failed and what to do.
package enum SpeechRecognitionError: Error, Equatable, CustomStringConvertible {
    /// A model part was not found; `searched` lists every place looked at.
    case modelNotFound(part: String, searched: [String])
    /// The folder given with `--model-dir` does not exist.
    case modelDirectoryNotFound(path: String)
    /// A model part exists but is incomplete or unreadable.
    case modelBroken(path: String, reason: String)
    case grammarNotFound(path: String)
    case keywordListNotFound(path: String)
    /// PocketSphinx refused the grammar (syntax error, unknown words); `details` holds its own messages.
    case grammarInvalid(path: String, details: [String])
    /// Keyphrase or keyword list rejected (usually words missing from the dictionary).
    case keyphraseInvalid(phrase: String, details: [String])
    /// The decoder could not be created for another reason; `details` holds PocketSphinx's messages.
    case decoderInitFailed(details: [String])
    /// A decoding call failed mid-utterance.
    case decodeFailed(operation: String, code: Int)
    /// A call came in the wrong order, e.g. audio before `startUtterance()`.
    case notInUtterance(operation: String)

    package var description: String {
        switch self {
        case .modelNotFound(let part, let searched):
            return "No PocketSphinx \(part) found. Looked in: \(searched.joined(separator: ", ")). "
                + "Install Debian's pocketsphinx-en-us package (apt-get install pocketsphinx-en-us), "
                + "or pass --model-dir DIR with the model (see models/README.md)."
        case .modelDirectoryNotFound(let path):
            return "The model folder \(path) (--model-dir) does not exist. Give a folder holding an acoustic model "
                + "(see models/README.md), or leave --model-dir out to use Debian's pocketsphinx-en-us model."
        case .modelBroken(let path, let reason):
            return "The PocketSphinx model at \(path) is broken: \(reason). "
                + "Reinstall pocketsphinx-en-us (apt-get install --reinstall pocketsphinx-en-us) "
                + "or fix the model folder."
        case .grammarNotFound(let path):
            return "Grammar file \(path) does not exist or cannot be read; give the path of a JSGF (.gram) file."
        case .keywordListNotFound(let path):
            return "Keyword list \(path) does not exist or cannot be read; give a file with one phrase a line."
        case .grammarInvalid(let path, let details):
            return "PocketSphinx rejected the grammar \(path)"
                + Self.detailText(details, fallback: "check the JSGF syntax and that every word is in the dictionary")
        case .keyphraseInvalid(let phrase, let details):
            return "PocketSphinx rejected the wake phrase '\(phrase)'"
                + Self.detailText(details, fallback: "every word must be in the dictionary")
        case .decoderInitFailed(let details):
            return "The PocketSphinx decoder could not be created"
                + Self.detailText(details, fallback: "check the model files and options")
        case .decodeFailed(let operation, let code):
            return "PocketSphinx failed in \(operation) (code \(code)); reset the recogniser and start a new utterance."
        case .notInUtterance(let operation):
            return "\(operation) was called with no utterance in progress; call startUtterance() first."
        }
    }

    private static func detailText(_ details: [String], fallback: String) -> String {
        details.isEmpty ? " (\(fallback))." : ": " + details.joined(separator: "; ")
    }
}
