/// The text guard of barge-in: while a reply plays, a partial only interrupts when it holds at least
/// `BargeInPolicy.TextGuard.minimumNewCharacters` letters or digits in words that are not words of what is being
/// spoken, so the reply's own echo, recognised back, never stops it.
enum BargeInTextGuard {
    static func isNewSpeech(_ partial: String, spoken: String, minimumCharacters: Int = BargeInPolicy.TextGuard().minimumNewCharacters) -> Bool {
        let replyWords = Set(words(of: spoken))
        let fresh = words(of: partial).filter { !replyWords.contains($0) }
        // Letters and digits only: dictation heard a reply's echo as "o.'s", whose "o" and "'s" made 3 with
        // the apostrophe, and cut the reply off (CI, loaded machine).
        return fresh.reduce(0) { $0 + $1.filter { $0.isLetter || $0.isNumber }.count } >= minimumCharacters
    }

    static func words(of text: String) -> [String] {
        text.lowercased().split { !($0.isLetter || $0.isNumber || $0 == "'") }.map(String.init)
    }
}
