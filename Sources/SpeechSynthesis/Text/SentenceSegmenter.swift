/// Cuts a streamed markdown reply into speakable pieces as soon as each is complete, so the first sentence is
/// synthesised while the rest is still arriving. Fed the reply as it grows (`append` for deltas, `replace` for
/// snapshots), it hands out each piece once, in order, already cleaned by `SpeakableText`; `finish()` flushes the
/// rest.
///
/// A piece ends at a sentence end (`.`, `!`, `?`, `…` followed by whitespace, but not after an abbreviation such as
/// "Dr." or an initial, and never inside a number such as 3.5, inline code or a link), at a line end (headings,
/// list items, table rows), or around a fenced code block, which is said as "code omitted" once it is closed.
/// A sentence longer than `softLimit` spoken characters is cut, like the iOS app does: at the last clause mark
/// (, ; : or a dash) that leaves at least a third of the limit, otherwise at the last word boundary, so no piece is
/// longer than the limit unless a single word is.
package struct SentenceSegmenter: Sendable {
    package let softLimit: Int
    /// Text beyond this is ignored: a runaway reply cannot grow memory without bound.
    package static let maximumLength = 1_000_000

    private var text: [Character] = []
    /// Characters of `text` already handed out or skipped; never moves back.
    private var emitted = 0
    private var finished = false
    /// An open code block already searched for its closing line: where it starts and the line end searched up to,
    /// so a long block streamed in small deltas is not searched from its start again each time.
    private var openFence: (start: Int, searchedTo: Int)?

    package init(softLimit: Int = 72) {
        self.softLimit = max(softLimit, 8)
    }

    /// Adds a delta; returns the pieces it completed.
    package mutating func append(_ delta: String) -> [String] {
        guard !finished else { return [] }
        text += delta.prefix(max(0, Self.maximumLength - text.count))
        return advance(final: false)
    }

    /// Replaces the reply with a snapshot of it; returns the pieces completed. What was already said is not said
    /// again: when the snapshot rewrites text already handed out, speech goes on from the same place in the new
    /// text (at the next word boundary), since it cannot be unsaid.
    package mutating func replace(with snapshot: String) -> [String] {
        guard !finished else { return [] }
        let new = Array(snapshot.prefix(Self.maximumLength))
        var common = 0
        while common < min(text.count, new.count), text[common] == new[common] { common += 1 }
        if common < emitted {
            var resume = min(emitted, new.count)
            if resume > 0, !new[resume - 1].isWhitespace {
                while resume < new.count, !new[resume].isWhitespace { resume += 1 }
            }
            emitted = resume
        }
        text = new
        openFence = nil
        return advance(final: false)
    }

    /// The reply is complete: returns whatever is left, in pieces.
    package mutating func finish() -> [String] {
        guard !finished else { return [] }
        defer { finished = true }
        return advance(final: true)
    }

    private mutating func advance(final: Bool) -> [String] {
        var pieces: [String] = []
        while true {
            while emitted < text.count, text[emitted].isWhitespace { emitted += 1 }
            guard emitted < text.count else { break }
            let start = emitted
            if isLineStart(start), text[start] == "`" || text[start] == "~" {
                switch fencedBlock(at: start, final: final) {
                case .notAFence: break
                case .waiting: return pieces
                case .block(let end):
                    pieces.append(SpeakableText.codeOmitted)
                    emitted = end
                    continue
                }
            }
            guard let end = pieceEnd(from: start, final: final) else { break }
            let spoken = SpeakableText.clean(String(text[start..<end]))
            if !spoken.isEmpty { pieces.append(spoken) }
            emitted = end
        }
        return pieces
    }

    private enum Fence { case notAFence, waiting, block(end: Int) }

    /// A fenced code block starting at `start`: where it ends (after its closing line), or that more text is needed.
    private mutating func fencedBlock(at start: Int, final: Bool) -> Fence {
        let mark = text[start]
        var run = start
        while run < text.count, text[run] == mark { run += 1 }
        if run == text.count, !final, run - start < 3 { return .waiting }
        guard run - start >= 3 else { return .notAFence }
        let fence = String(repeating: mark, count: run - start)
        guard var lineEnd = text[run...].firstIndex(where: \.isNewline) else { return final ? .block(end: text.count) : .waiting }
        if let openFence, openFence.start == start { lineEnd = max(lineEnd, openFence.searchedTo) }
        while lineEnd < text.count {
            let lineStart = lineEnd + 1
            let next = text[lineStart...].firstIndex(where: \.isNewline)
            guard next != nil || final else {
                openFence = (start, lineEnd)
                return .waiting
            }
            let line = String(text[lineStart..<(next ?? text.count)]).trimmingCharacters(in: .whitespaces)
            if line.hasPrefix(fence), line.allSatisfy({ $0 == mark }) {
                openFence = nil
                return .block(end: next ?? text.count)
            }
            lineEnd = next ?? text.count
        }
        openFence = (start, lineEnd)
        return final ? .block(end: text.count) : .waiting
    }

    /// Where the piece starting at `start` ends, or nil when that is not known yet.
    private func pieceEnd(from start: Int, final: Bool) -> Int? {
        var cuts: [(at: Int, clause: Bool)] = []
        var inCode = false
        var brackets = 0
        var inTarget = false
        var i = start
        while i < text.count {
            // A "word" this long is not speech (a hash, a data blob): cut it rather than scan it on every delta.
            if i - start >= Self.hardLimit { return softCut(start, end: i, cuts: cuts) ?? i }
            let c = text[i]
            if c.isNewline { return softCut(start, end: i, cuts: cuts) ?? i }
            if c == "`" {
                inCode.toggle()
            } else if !inCode {
                if c == "[" { brackets += 1 }
                if c == "]" {
                    brackets = max(0, brackets - 1)
                    if i + 1 < text.count, text[i + 1] == "(" { inTarget = true }
                }
                if c == ")", inTarget, brackets == 0 { inTarget = false }
            }
            let plain = !inCode && brackets == 0 && !inTarget
            if plain, Self.terminators.contains(c) {
                var j = i + 1
                while j < text.count, Self.terminators.contains(text[j]) || Self.closers.contains(text[j]) { j += 1 }
                if j == text.count {
                    // Whether this ends the sentence depends on what follows ("3." may become "3.5").
                    break
                }
                if text[j].isWhitespace {
                    // Unknown until the next word arrives ("e.g. this" goes on, "the U.S. Then" ends).
                    guard let continues = continuesAfterPeriod(at: i, next: j, final: final) else { break }
                    if !continues { return softCut(start, end: j, cuts: cuts) ?? j }
                }
                i = j
                continue
            }
            if plain, c.isWhitespace, i > start {
                if i - start > softLimit, let cut = softCut(start, end: i, cuts: cuts) { return cut }
                let before = text[i - 1]
                let clause = Self.clauseMarks.contains(before)
                    || (Self.dashes.contains(before) && (i - 2 < start || text[i - 2].isWhitespace))
                cuts.append((i, clause))
            }
            i += 1
        }
        guard final else { return nil }
        return softCut(start, end: text.count, cuts: cuts) ?? text.count
    }

    /// A cut inside `start..<end` when the piece would be longer than the soft limit, else nil.
    private func softCut(_ start: Int, end: Int, cuts: [(at: Int, clause: Bool)]) -> Int? {
        guard end - start > softLimit, spokenLength(start, end) > softLimit else { return nil }
        let fitting = cuts.filter { spokenLength(start, $0.at) <= softLimit }
        if let clause = fitting.last(where: { $0.clause && spokenLength(start, $0.at) >= softLimit / 3 }) {
            return clause.at
        }
        if let word = fitting.last { return word.at }
        // One word longer than the limit: cut right after it.
        return cuts.first?.at
    }

    private func spokenLength(_ start: Int, _ end: Int) -> Int {
        SpeakableText.clean(String(text[start..<end])).count
    }

    /// Whether a `.` at `index` belongs to the word before it (an abbreviation, an initial, a list number) rather
    /// than ending the sentence; `next` is the whitespace after the period and its closers. Nil: the word after
    /// it decides, and it has not arrived yet.
    private func continuesAfterPeriod(at index: Int, next: Int, final: Bool) -> Bool? {
        guard text[index] == "." else { return false }
        var tokenStart = index
        while tokenStart > 0, !text[tokenStart - 1].isWhitespace, !"([\"'“‘".contains(text[tokenStart - 1]) {
            tokenStart -= 1
        }
        let token = String(text[tokenStart..<index])
        guard !token.isEmpty else { return false }
        if token.allSatisfy(\.isNumber) { return isLineStart(tokenStart) }  // "1. First item"
        if token.count == 1, token.first?.isUppercase == true { return true }  // "J. Smith"
        let lower = token.lowercased()
        if Self.titles.contains(lower) { return true }
        let dotted = token.contains(".") && token.split(separator: ".").allSatisfy { $0.count == 1 }
        if Self.abbreviations.contains(lower) || dotted {
            // "e.g. this" goes on; "in the U.S. Then" ends: only a capital after it ends the sentence.
            var k = next
            while k < text.count, text[k].isWhitespace, !text[k].isNewline { k += 1 }
            if k == text.count { return final ? false : nil }
            guard !text[k].isNewline else { return false }
            return !text[k].isUppercase
        }
        return false
    }

    /// True when only spaces stand between the previous line break (or the start) and `index`.
    private func isLineStart(_ index: Int) -> Bool {
        var k = index - 1
        while k >= 0 {
            if text[k].isNewline { return true }
            if !text[k].isWhitespace { return false }
            k -= 1
        }
        return true
    }

    /// No piece runs longer than this many characters of markdown, whatever it holds.
    static let hardLimit = 400
    private static let terminators: Set<Character> = [".", "!", "?", "…"]
    private static let closers: Set<Character> = ["\"", "'", "”", "’", ")", "]", "*", "_"]
    private static let clauseMarks: Set<Character> = [",", ";", ":"]
    private static let dashes: Set<Character> = ["—", "–", "-"]
    /// Always followed by a name: never the end of a sentence.
    private static let titles: Set<String> = [
        "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "rev", "hon", "gen", "col", "capt", "lt", "sgt",
    ]
    /// Usually inside a sentence; end one only before a capital.
    private static let abbreviations: Set<String> = [
        "e.g", "i.e", "vs", "approx", "cf", "no", "fig", "inc", "ltd", "co", "etc", "a.m", "p.m", "ca", "al",
    ]
}
