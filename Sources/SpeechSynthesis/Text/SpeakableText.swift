import Foundation

/// Turns a piece of a markdown reply into what should be said: the words a reader sees, not the syntax.
/// Emphasis, heading and list markers, quote marks and table pipes go; a link is its text; a URL is its host
/// name; inline code stays as words; emoji and other pictographs are not read out. Fenced code blocks are
/// handled by `SentenceSegmenter`, which says `codeOmitted` for each.
package enum SpeakableText {
    /// What is said for a fenced code block.
    package static let codeOmitted = "code omitted"

    /// The speakable form of `markdown` (one segment or a few lines, without fences); empty when nothing in it
    /// is worth saying (a rule, a table separator, an emoji).
    package static func clean(_ markdown: String) -> String {
        let lines = markdown.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline)
        let spoken = lines.map { cleanLine(String($0)) }.filter { !$0.isEmpty }
        return spoken.joined(separator: " ")
    }

    private static func cleanLine(_ raw: String) -> String {
        var line = raw.trimmingCharacters(in: .whitespaces)
        if matches(Pattern.rule, line) || matches(Pattern.tableSeparator, line) { return "" }
        if line.hasPrefix("|") {
            line = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }.joined(separator: ", ")
        }
        for marker in [Pattern.heading, Pattern.quote, Pattern.bullet, Pattern.numbered, Pattern.task] {
            line = replace(marker, in: line, with: "")
        }
        // Code spans first, so nothing inside them is taken for emphasis or a link.
        var out = ""
        for (index, part) in line.split(separator: "`", omittingEmptySubsequences: false).enumerated() {
            out += index % 2 == 1 ? " " + codeWords(String(part)) + " " : inline(String(part))
        }
        return collapseWhitespace(withoutPictographs(out))
    }

    /// Links to their text, URLs to their host, emphasis and tags dropped.
    private static func inline(_ text: String) -> String {
        var s = replace(Pattern.image, in: text, with: "$1")
        s = replace(Pattern.link, in: s, with: "$1")
        s = replace(Pattern.referenceLink, in: s, with: "$1")
        s = replacingURLs(in: s)
        s = replace(Pattern.tag, in: s, with: " ")
        for emphasis in [Pattern.strong, Pattern.strongUnderscore, Pattern.strike, Pattern.em, Pattern.emUnderscore] {
            s = replace(emphasis, in: s, with: "$1")
        }
        // Leftover markers (unbalanced, or from a cut inside emphasis) are not words either.
        return s.replacingOccurrences(of: "**", with: "").replacingOccurrences(of: "~~", with: "")
            .replacingOccurrences(of: "*", with: " ")
    }

    /// `snake_case`, `a/b`, `f(x)` said as their words.
    private static func codeWords(_ code: String) -> String {
        String(code.map { $0.isLetter || $0.isNumber || $0.isWhitespace ? $0 : " " })
    }

    /// Each URL (bare, or in angle brackets) replaced by its host name without `www.`.
    private static func replacingURLs(in text: String) -> String {
        let ns = text as NSString
        var result = ""
        var last = 0
        for match in Pattern.url.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
            result += ns.substring(with: NSRange(location: last, length: match.range.location - last))
            var url = ns.substring(with: match.range(at: 1))
            if !url.contains("://") { url = "http://" + url }
            var host = URL(string: url)?.host ?? ""
            if host.hasPrefix("www.") { host.removeFirst(4) }
            result += host
            last = match.range.location + match.range.length
        }
        return result + ns.substring(from: last)
    }

    private static func withoutPictographs(_ text: String) -> String {
        String(text.filter { character in !character.unicodeScalars.contains(where: isPictographic) })
    }

    private static func isPictographic(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isEmoji && !scalar.isASCII { return true }  // ASCII digits, # and * are emoji too
        switch scalar.value {
        case 0x1F1E6...0x1F1FF: return true  // regional indicators (flags)
        case 0x1F3FB...0x1F3FF: return true  // skin tones
        case 0xFE0F, 0x200D, 0x20E3: return true  // emoji presentation, joiner, keycap
        default: return false
        }
    }

    private static func collapseWhitespace(_ text: String) -> String {
        var out = ""
        for word in text.split(whereSeparator: \.isWhitespace) {
            // A mark left alone by a removed emoji or code span goes back onto the word before it.
            if !out.isEmpty, !word.allSatisfy({ ",.;:!?".contains($0) }) { out += " " }
            out += word
        }
        return out
    }

    private static func matches(_ regex: NSRegularExpression, _ text: String) -> Bool {
        regex.firstMatch(in: text, range: NSRange(location: 0, length: (text as NSString).length)) != nil
    }

    private static func replace(_ regex: NSRegularExpression, in text: String, with template: String) -> String {
        regex.stringByReplacingMatches(
            in: text, range: NSRange(location: 0, length: (text as NSString).length), withTemplate: template)
    }

    private enum Pattern {
        static let rule = regex(#"^([-*_])(\s*\1){2,}\s*$"#)
        static let tableSeparator = regex(#"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$"#)
        static let heading = regex(#"^#{1,6}\s+|\s+#+\s*$"#)
        static let quote = regex(#"^(>\s?)+"#)
        static let bullet = regex(#"^[-*+•]\s+"#)
        static let numbered = regex(#"^\d{1,9}[.)]\s+"#)
        static let task = regex(#"^\[[ xX]\]\s+"#)
        static let image = regex(#"!\[([^\]]*)\]\([^)]*\)"#)
        static let link = regex(#"\[([^\]]+)\]\([^)]*\)"#)
        static let referenceLink = regex(#"\[([^\]]+)\]\[[^\]]*\]"#)
        static let url = regex(#"<?((?:https?://|www\.)[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'"])>?"#)
        static let tag = regex(#"</?[A-Za-z][A-Za-z0-9-]*(\s[^>]*)?/?>"#)
        static let strong = regex(#"\*\*(.+?)\*\*"#)
        static let strongUnderscore = regex(#"(?<![\p{L}\p{N}_])__(.+?)__(?![\p{L}\p{N}_])"#)
        static let strike = regex(#"~~(.+?)~~"#)
        static let em = regex(#"(?<![\p{L}\p{N}*])\*(?=\S)(.+?)(?<=\S)\*(?![\p{L}\p{N}*])"#)
        static let emUnderscore = regex(#"(?<![\p{L}\p{N}_])_(?=\S)(.+?)(?<=\S)_(?![\p{L}\p{N}_])"#)

        private static func regex(_ pattern: String) -> NSRegularExpression {
            // The patterns are constants: a typo is a programming error caught by the first test.
            try! NSRegularExpression(pattern: pattern, options: [])
        }
    }
}
