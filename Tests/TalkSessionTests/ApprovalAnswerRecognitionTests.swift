import Foundation
import SessionBridge
import SpeechRecognition
import TalkLogging
import TalkTestSupport
import Testing

@testable import TalkSession

/// What the answers' grammar (`ApprovalPrompt.grammar`) makes of real speech: the daemon's dictation recogniser
/// switched to it, espeak-ng's voice as the user, `ApprovalPrompt.interpret` as the loop reads the final.
@Suite struct ApprovalAnswerRecognitionTests {
    static let espeak = TestInput.program("espeak-ng", package: "espeak-ng")
    static let sox = TestInput.program("sox", package: "sox")

    /// 16 kHz mono speech with 300 ms of quiet room noise either side (digital silence throws the cepstral mean off).
    static func speech(_ text: String, voice: String = "en-us", wordsPerMinute: Int = 175) async throws -> [Int16] {
        let folder = NSTemporaryDirectory() + "answer-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let wav = folder + "/espeak.wav", raw = folder + "/speech.raw"
        for (tool, arguments) in [("/usr/bin/espeak-ng", ["-v", voice, "-s", "\(wordsPerMinute)", "-w", wav, text]),
                                  ("/usr/bin/sox", [wav, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed", "-t", "raw", raw, "pad", "0.3", "0.3"])] {
            let (status, _) = try await ChildProcess.output(tool, arguments)
            try #require(status == 0, "\(tool) failed")
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        var state: UInt32 = 0x1234_5678
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }.map { sample in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Int16(clamping: Int(sample) + Int(state >> 24) % 65 - 32)
        }
    }

    /// The final of `samples` heard by a dictation recogniser in the answers' grammar of all three decisions.
    static func heard(_ samples: [Int16], by recognizer: PocketSphinxRecognizer) async throws -> Hypothesis {
        try await recognizer.useGrammar(ApprovalPrompt.grammar(allowed: ApprovalDecision.allCases))
        try await recognizer.startUtterance()
        for start in stride(from: 0, to: samples.count, by: 320) {
            _ = try await recognizer.process(Array(samples[start..<min(start + 320, samples.count)]))
        }
        return try await recognizer.endUtterance()
    }

    static func recognizer() async throws -> PocketSphinxRecognizer {
        try await offPool { try PocketSphinxRecognizer(configuration: RecognizerConfiguration(mode: .dictation()), logger: Logger(label: "test.answers")) }
    }

    @Test(.requires(espeak, sox), arguments: [
        ("allow once", ApprovalPrompt.Answer.decision(.allowOnce)), ("allow always", .decision(.allowAlways)),
        ("deny", .decision(.deny)), ("cancel", .cancel), ("repeat", .repeatQuestion), ("yes", .yes), ("no", .no),
    ])
    func `each spoken answer means what it says`(spoken: String, meaning: ApprovalPrompt.Answer) async throws {
        let hypothesis = try await Self.heard(try await Self.speech(spoken), by: try await Self.recognizer())
        #expect(ApprovalPrompt.interpret(hypothesis.text, allowed: ApprovalDecision.allCases) == meaning, "heard \(hypothesis.text)")
    }

    /// A closed grammar maps whatever is said onto one of its sentences, and PocketSphinx gives no usable confidence
    /// for it (see `ApprovalPrompt.minimumConfidence`). With "once" alone among the answers, four of these became
    /// "once", an allow-once; with only "allow once", none does.
    @Test(.requires(espeak, sox), arguments: [
        "what time is it", "sure go ahead", "i want to go home", "what is the weather like", "hello there how are you",
        "hmm let me think", "okay", "stop", "i don't know",
    ])
    func `everyday speech heard in the answers' grammar never allows a command once`(sentence: String) async throws {
        let hypothesis = try await Self.heard(try await Self.speech(sentence), by: try await Self.recognizer())
        #expect(ApprovalPrompt.interpret(hypothesis.text, allowed: ApprovalDecision.allCases) != .decision(.allowOnce),
                "heard \(hypothesis.text)")
    }
}
