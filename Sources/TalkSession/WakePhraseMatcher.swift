/// Finds a wake phrase in a transcript, word by word and ignoring case and punctuation; the spaces inside a phrase
/// do not count, so the Gateway's trigger "openclaw" matches the recogniser's "open claw" (the dictionary has no
/// "openclaw") and the local "hey open claw" matches "hey openclaw".
enum WakePhraseMatcher {
    struct Match: Sendable, Equatable {
        /// The phrase as listed.
        var phrase: String
        /// What followed it in the transcript (empty when the phrase ended it).
        var command: String
    }

    /// The earliest phrase in `transcript` (the longest one where two start at the same word).
    static func match(_ transcript: String, phrases: [String]) -> Match? {
        let words = BargeInTextGuard.words(of: transcript)
        let targets = phrases.compactMap { phrase -> (String, String)? in
            let compact = BargeInTextGuard.words(of: phrase).joined()
            return compact.isEmpty ? nil : (phrase, compact)
        }
        guard !words.isEmpty, !targets.isEmpty else { return nil }
        for start in words.indices {
            var best: (phrase: String, end: Int)?
            for (phrase, compact) in targets {
                var joined = ""
                var end = start
                while end < words.count, joined.count < compact.count {
                    joined += words[end]
                    end += 1
                }
                if joined == compact, end > (best?.end ?? start) { best = (phrase, end) }
            }
            if let best { return Match(phrase: best.phrase, command: words[best.end...].joined(separator: " ")) }
        }
        return nil
    }
}
