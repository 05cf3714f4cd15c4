import Foundation
import SessionBridge

/// What the spoken approval prompt says and hears, with no I/O: the short, speakable question ("The agent wants to
/// run: r m dash r f build, in proj. Allow once, always, or deny?"), the small JSGF grammar of the answers the
/// request allows, and what a heard answer means. The loop's `asking` state drives it.
package enum ApprovalPrompt {
    /// What an answer means.
    package enum Answer: Sendable, Equatable {
        case decision(ApprovalDecision)
        /// A decision the request does not offer (allow always on an `ask: always` command).
        case unavailable(ApprovalDecision)
        case cancel
        case repeatQuestion
        case yes
        case no
    }

    /// Spoken commands are cut after this many words ("and more"); the full text is in events and status.
    static let maxCommandWords = 8

    /// How long the microphone waits for an answer to begin once it opens after the question: 8 s is time to hear
    /// the question out and say two words after a moment's thought; longer would hold the loop (and the user's next
    /// request) for an answer that is not coming. Nothing is lost when it runs out: the approval stays pending, with
    /// a desktop notification.
    package static let answerWindow: Duration = .seconds(8)

    /// An answer the recogniser is less sure of than this (its confidence, 0...1) counts as not understood: a
    /// decision to run a command is not taken on a guess. In the answers' grammar PocketSphinx's own posterior is 1.0
    /// for every result, in-grammar or not, so the recogniser checks each grammar result against a free phone loop
    /// over the same audio (`OutOfGrammarCheck`) and gives speech or noise that was not said in the grammar a
    /// confidence of 0; an answer keeps its 1.0. With dictation (a listener that cannot switch grammars) clear
    /// answers scored 0.002 ("allow once") to 0.53 ("yes"), so 0.2 refuses most of them there, and only a second
    /// miss leaves the approval pending.
    package static let minimumConfidence = 0.2

    /// Answers not understood before the approval is left pending: asked once more, then left (the issue's "low
    /// confidence twice").
    package static let maximumMisses = 2

    /// The question.
    package static func question(for approval: PendingApproval) -> String {
        let what: String = switch approval.kind {
        case .exec:
            "The agent wants to run: " + speakable(command: approval.command ?? "a command")
                + (approval.cwd.map { ", in " + speakable(folder: $0) } ?? "")
        case .plugin:
            "A plugin asks: " + (approval.title ?? approval.toolName ?? "to act")
        }
        return what + ". " + choices(approval.allowedDecisions)
    }

    /// "Allow once, always, or deny?" for what the request allows.
    package static func choices(_ allowed: [ApprovalDecision]) -> String {
        allowed.contains(.allowAlways) ? "Allow once, always, or deny?" : "Allow once, or deny?"
    }

    /// A command as words a voice reads well: short tool names spelled ("rm" → "r m"), flags with "dash", paths by
    /// their last part, shell signs named, at most `maxCommandWords` words.
    package static func speakable(command: String) -> String {
        let words = command.split(whereSeparator: \.isWhitespace).map(String.init)
        var spoken = words.prefix(maxCommandWords).map(speakable(word:))
        if words.count > maxCommandWords { spoken.append("and more") }
        return spoken.joined(separator: " ")
    }

    static let signs: [String: String] = ["|": "pipe", "||": "or else", "&&": "and then", ">": "into", ">>": "appended to",
                                          "<": "from", ";": "then", "&": "in the background", "~": "home", "*": "star"]

    static func speakable(word: String) -> String {
        if let sign = signs[word] { return sign }
        if word.hasPrefix("-") {
            let dashes = word.prefix { $0 == "-" }
            let rest = String(word.dropFirst(dashes.count))
            let spelled = rest.count <= 3 && !rest.contains("=") ? rest.map(String.init).joined(separator: " ") : rest
            return (Array(repeating: "dash", count: min(dashes.count, 2)) + [spelled]).joined(separator: " ")
        }
        if word.contains("/") { return speakable(folder: word) }
        let letters = word.filter(\.isLetter)
        let vowels = letters.filter { "aeiouy".contains($0.lowercased()) }
        if word.count <= 3, !letters.isEmpty, vowels.isEmpty || word.count <= 2 {
            return word.map(String.init).joined(separator: " ")
        }
        return word
    }

    /// A folder by its last part ("/home/u/proj" → "proj"), "home" for the home folder.
    static func speakable(folder: String) -> String {
        let parts = folder.split(separator: "/")
        guard let last = parts.last else { return "the root folder" }
        return last == "~" ? "home" : String(last)
    }

    /// The JSGF grammar of the answers: the decisions offered, cancel, repeat, and yes/no (the second confirmation).
    /// A closed grammar maps whatever is said onto one of its sentences, so allowing takes both words: with "once"
    /// alone among the answers, espeak-ng saying "what time is it", "sure go ahead", "what is the weather like" or
    /// "i want to go home" was heard as "once", an allow-once (`ApprovalAnswerRecognitionTests`).
    package static func grammar(allowed: [ApprovalDecision]) -> String {
        var phrases: [String] = []
        if allowed.contains(.allowOnce) { phrases += ["allow once"] }
        if allowed.contains(.allowAlways) { phrases += ["allow always"] }
        if allowed.contains(.deny) { phrases += ["deny"] }
        phrases += ["cancel", "repeat", "yes", "no"]
        return "#JSGF V1.0;\ngrammar approval;\npublic <answer> = " + phrases.joined(separator: " | ") + " ;\n"
    }

    /// What a heard transcript means, or nil (nothing recognisable: asked again, then left pending).
    package static func interpret(_ text: String, allowed: [ApprovalDecision]) -> Answer? {
        let words = text.lowercased().split { !$0.isLetter }.map(String.init)
        let said = Set(words)
        func offered(_ d: ApprovalDecision) -> Answer { allowed.contains(d) ? .decision(d) : .unavailable(d) }
        if said.contains("always") { return offered(.allowAlways) }
        if said.contains("once") { return offered(.allowOnce) }
        if said.contains("deny") || said.contains("denied") { return offered(.deny) }
        if said.contains("cancel") { return .cancel }
        if said.contains("repeat") || said.contains("again") { return .repeatQuestion }
        if words == ["yes"] || said.contains("yes") && !said.contains("no") { return .yes }
        if said.contains("no") { return .no }
        return nil
    }

    /// What is said once a decision goes out, or the prompt ends without one.
    package static func confirmation(_ decision: ApprovalDecision) -> String {
        switch decision {
        case .allowOnce: "Allowed once."
        case .allowAlways: "Allowed always."
        case .deny: "Denied."
        }
    }

    package static let confirmAlways = "Allow this command always, from now on? Say yes or no."
    package static let withdrawn = "Handled elsewhere."
    package static let leftPending = "I'll leave it pending; there is a notification on your desktop."
    package static let notUnderstood = "Sorry, I did not get that."
}
