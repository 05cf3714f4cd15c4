/// Turns a reference transcript or a hypothesis into the words that are scored, by the rules of the
/// speech corpus README: lowercase; `[...]` and `<...>` annotations dropped; `etc.` -> `et cetera`,
/// `yknow` -> `you know`; hyphens, dashes and slashes split words; other punctuation removed except an
/// apostrophe inside a word; fillers (uh, um, uhm, hm, hmm, mm, mhm, er, ah, eh) dropped.
package enum TranscriptNormalizer {
    package static let fillers: Set<String> = ["uh", "um", "uhm", "hm", "hmm", "mm", "mhm", "er", "ah", "eh"]
    private static let separators: Set<Character> = ["-", "\u{2010}", "\u{2011}", "\u{2012}", "\u{2013}", "\u{2014}", "\u{2015}", "\u{2212}", "/", "\\"]
    private static let apostrophes: Set<Character> = ["'", "\u{2019}", "\u{2018}", "\u{02BC}"]

    /// The scored words of `text`.
    package static func words(_ text: String) -> [String] {
        var cleaned = ""
        var depth: Character?  // the closing bracket of an annotation being skipped
        for ch in text.lowercased() {
            if let close = depth {
                if ch == close { depth = nil; cleaned.append(" ") }
                continue
            }
            switch ch {
            case "[": depth = "]"
            case "<": depth = ">"
            default: cleaned.append(ch)
            }
        }
        var out: [String] = []
        for raw in cleaned.split(whereSeparator: \.isWhitespace) {
            let token = raw.hasPrefix("etc.") ? "et cetera" + raw.dropFirst(4) : String(raw)
            for piece in token.split(whereSeparator: { $0.isWhitespace || separators.contains($0) }) {
                out.append(contentsOf: expand(strip(piece)))
            }
        }
        return out
    }

    /// The normalised text: the scored words joined by single spaces.
    package static func normalize(_ text: String) -> String { words(text).joined(separator: " ") }

    /// Removes punctuation; an apostrophe survives only between two letters or digits.
    private static func strip(_ piece: Substring) -> String {
        let chars = Array(piece)
        var kept = ""
        for (i, c) in chars.enumerated() {
            if c.isLetter || c.isNumber {
                kept.append(c)
            } else if apostrophes.contains(c), i > 0, i + 1 < chars.count,
                      chars[i - 1].isLetter || chars[i - 1].isNumber, chars[i + 1].isLetter || chars[i + 1].isNumber {
                kept.append("'")
            }
        }
        return kept
    }

    private static func expand(_ word: String) -> [String] {
        if word.isEmpty || fillers.contains(word) { return [] }
        if word == "yknow" { return ["you", "know"] }
        return [word]
    }
}
