import Foundation
import TalkTestSupport
import Testing

@testable import SpeechRecognition

/// A dictation recogniser switched to a small grammar (an approval's answers) and back, as the Talk loop does while
/// it asks: real PocketSphinx, real (synthesised) speech.
@Suite(.offPool) struct GrammarSwitchTests {
    /// The answers the Talk loop listens for (`ApprovalPrompt.grammar`, which this target cannot see).
    static let answers = ["allow once", "once", "allow always", "always", "deny", "cancel", "repeat", "yes", "no"]
    static func grammar(_ phrases: [String] = answers) -> String {
        "#JSGF V1.0;\ngrammar approval;\npublic <answer> = " + phrases.joined(separator: " | ") + " ;\n"
    }

    static func dictation() async throws -> PocketSphinxRecognizer { try await TestAudio.recognizer(.dictation()) }

    @Test func `with the answers' grammar a dictation recogniser hears only its sentences, and dictation again after`()
        async throws
    {
        let recognizer = try await Self.dictation()
        // espeak-ng's "I don't know" is a sentence the language model gets exactly (and the grammar cannot hold).
        let sentence = try await SynthesizedSpeech.samples("i don't know")
        #expect(try await TestAudio.decode(sentence, with: recognizer).text == "i don't know")
        try await recognizer.useGrammar(Self.grammar())
        let constrained = try await TestAudio.decode(sentence, with: recognizer).text
        #expect(Self.answers.contains(constrained), "heard outside the grammar: \(constrained)")
        try await recognizer.useGrammar(nil)
        #expect(try await TestAudio.decode(sentence, with: recognizer).text == "i don't know")
    }

    /// PocketSphinx frees a search replaced under the same name even while it is the current one (a C program doing
    /// that crashed in ps_start_utt), so each grammar comes in under a name of its own; here the second approval's
    /// grammar, and the first's again, are each the one the next utterance is heard with. (Replacing in place did not
    /// crash this test: the allocator handed the freed block to the new search. The precondition in `addGrammar`
    /// is the guard.)
    @Test func `a new grammar replaces the one in use, and the next utterance is heard with it`() async throws {
        let recognizer = try await Self.dictation()
        let deny = try await SynthesizedSpeech.samples("deny")
        try await recognizer.useGrammar(Self.grammar())
        #expect(try await TestAudio.decode(deny, with: recognizer).text == "deny")
        try await recognizer.useGrammar(Self.grammar(["allow once", "cancel", "repeat"]))
        let heard = try await TestAudio.decode(deny, with: recognizer).text
        #expect(heard != "deny" && ["allow once", "cancel", "repeat"].contains(heard), "\(heard)")
        try await recognizer.useGrammar(Self.grammar())
        #expect(try await TestAudio.decode(deny, with: recognizer).text == "deny")
    }

    /// As the daemon goes: an approval asked and withdrawn (back to dictation), then the next one asked.
    @Test func `the answers' grammar asked for a second time, after dictation, is the one heard with`() async throws {
        let recognizer = try await Self.dictation()
        let answer = try await SynthesizedSpeech.samples("allow once")
        let sentence = try await SynthesizedSpeech.samples("i don't know")
        for round in 1...3 {
            try await recognizer.useGrammar(Self.grammar())
            #expect(try await TestAudio.decode(answer, with: recognizer).text == "allow once", "round \(round)")
            try await recognizer.useGrammar(nil)
            #expect(try await TestAudio.decode(sentence, with: recognizer).text == "i don't know", "round \(round)")
        }
    }

    @Test func `a switch asked for during an utterance takes effect from the next one`() async throws {
        let recognizer = try await Self.dictation()
        let sentence = try await SynthesizedSpeech.samples("i don't know")
        try await recognizer.startUtterance()
        _ = try await recognizer.process(Array(sentence.prefix(3200)))
        try await recognizer.useGrammar(Self.grammar())
        for start in stride(from: 3200, to: sentence.count, by: 320) {
            _ = try await recognizer.process(Array(sentence[start..<min(start + 320, sentence.count)]))
        }
        #expect(try await recognizer.endUtterance().text == "i don't know")
        #expect(Self.answers.contains(try await TestAudio.decode(sentence, with: recognizer).text))
    }

    @Test func `a grammar with a word the dictionary lacks is refused with PocketSphinx's reason, and dictation goes on`()
        async throws
    {
        let recognizer = try await Self.dictation()
        do {
            try await recognizer.useGrammar(Self.grammar(["allow once", "zorbleflap"]))
            Issue.record("a grammar with an unknown word was taken")
        } catch let error as SpeechRecognitionError {
            guard case .grammarInvalid(_, let details) = error else { throw error }
            #expect(details.joined().contains("zorbleflap"), "\(details)")
        }
        let sentence = try await SynthesizedSpeech.samples("i don't know")
        #expect(try await TestAudio.decode(sentence, with: recognizer).text == "i don't know")
    }
}
