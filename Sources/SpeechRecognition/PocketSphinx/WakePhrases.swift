import Foundation

/// The phrases a wake-phrase mode spots, read the way PocketSphinx reads them, so each word can be checked
/// against the dictionary: PocketSphinx itself only warns about an unknown word and then never spots it.
enum WakePhrases {
    /// The phrases of a mode (none for dictation and grammars).
    static func phrases(for mode: RecognitionMode) throws -> [String] {
        switch mode {
        case .keyphrase(let phrase, _):
            return [phrase.lowercased()]
        case .keywordList(let path):
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw SpeechRecognitionError.keywordListNotFound(path: path)
            }
            return parseKeywordList(text)
        case .dictation, .grammar:
            return []
        }
    }

    /// One phrase a line, an optional `/threshold/` after it; blank lines are skipped.
    static func parseKeywordList(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            var phrase = Substring(line)
            if let slash = phrase.firstIndex(of: "/") { phrase = phrase[..<slash] }
            let trimmed = phrase.trimmingCharacters(in: .whitespaces)
            return trimmed.isEmpty ? nil : trimmed
        }
    }
}
