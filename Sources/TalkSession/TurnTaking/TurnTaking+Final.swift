import SessionBridge

/// What a final becomes when its utterance may have opened on the reply's echo (it opened over the reply and cut it
/// off, or went on after it): the words before the user's own sound are the echo's and are dropped; an utterance
/// that ended within the reply and its echo's tail (`BargeInPolicy.EchoTail`), or holds no words of the user's own,
/// is no turn.
extension TurnTaking {
    mutating func final(_ heard: String, timing: HeardTiming?) -> [Action] {
        if case .asking = state { return answerHeard(heard, confidence: nil) }
        userSpeechStartNs = nil
        let opened = openedOverReply
        openedOverReply = nil
        let ignored = "heard while the reply played, without interrupting it"
        if heard.isEmpty { return [.emit(.transcriptIgnored(text: heard, reason: "empty transcript"))] }
        if case .speaking = state {
            // Barge-in did not fire: the reply's own echo, or speech the guards let pass. Never a new turn.
            return [.emit(.transcriptIgnored(text: heard, reason: ignored))]
        }
        var text = heard
        var actions: [Action] = []
        // An utterance that opened over the reply (and cut it off, or went on after it) may have opened on its echo:
        // the words before the user's own sound are the echo's.
        if opened != nil || pendingInterruption != nil, let timing, let split = Self.echoWords(heard, timing) {
            // After a barge-in with the user's sound in it, their words may all end before that sound was found
            // (the reply explained their first frames): the words stay as heard. Without any sound of theirs the
            // barge-in was the echo's, and so are the words.
            if split.own.isEmpty, pendingInterruption == nil || timing.userSound == .echoOnly {
                return [.emit(.transcriptIgnored(text: heard, reason: "the reply's echo: none of it is the user's own sound"))]
            }
            if !split.echo.isEmpty, !split.own.isEmpty {
                actions.append(.emit(.transcriptIgnored(text: split.echo, reason: "the reply's echo, before the user's own sound")))
                text = split.own
            }
        }
        if let opened {
            // Spoken wholly over a reply it did not interrupt (the guards held it), its final only came after the
            // silence window: on the loopback, the reply's echo recognised as "cool".
            if opened.endedWithinReply { return actions + [.emit(.transcriptIgnored(text: text, reason: ignored))] }
            // It opened on the reply's echo and went on after the reply ended: without words the reply did not
            // hold (the text guard's test), it is the echo's tail, not a turn.
            if !BargeInTextGuard.isNewSpeech(text, spoken: opened.spoken, minimumCharacters: configuration.policy.text.minimumNewCharacters) {
                return actions + [.emit(.transcriptIgnored(text: text, reason: "opened while the reply played, with no words of the user's own"))]
            }
        }
        return actions + startTurn(text)
    }

    /// A final's words split at the user's own sound: the echo's are those that end before it begins, the user's
    /// the rest (`own` empty: the reply's sound explains all of the utterance, or every word ends before the user's
    /// sound). A word that reaches into the user's sound is kept: the reply's sound is judged over 100 ms windows, so
    /// the user's first frames may still read as explained, and their first word must not be lost. Nil when the
    /// timing says nothing of it: not measured, or the words are not the final's (the relay's, or a wake phrase's).
    static func echoWords(_ text: String, _ timing: HeardTiming) -> (echo: String, own: String)? {
        guard timing.words.map(\.text).joined(separator: " ") == text.split(separator: " ").joined(separator: " ") else { return nil }
        switch timing.userSound {
        case .unknown: return nil
        case .echoOnly: return (text, "")
        case .from(let ms):
            let echo = timing.words.prefix { $0.endMs <= ms }
            return (echo.map(\.text).joined(separator: " "), timing.words.dropFirst(echo.count).map(\.text).joined(separator: " "))
        }
    }
}
