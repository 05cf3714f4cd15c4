import AudioIO
import Foundation
import TalkTestSupport
import Testing

@testable import SpeechRecognition

@Suite(.offPool) struct GrammarRecognitionTests {
    @Test func `goforward is recognised exactly with its grammar`() async throws {
        let recognizer = try await TestAudio.recognizer(.grammar(path: TestAudio.testData + "/goforward.gram"))
        let audio = try TestAudio.raw(TestAudio.testData + "/goforward.raw")
        let hypothesis = try await TestAudio.decode(audio, with: recognizer)
        #expect(hypothesis.text == "go forward ten meters")
        #expect(hypothesis.words.map(\.word) == ["go", "forward", "ten", "meters"])
    }

    @Test(.requires(.sharedCorpus)) func `the corpus goforward recording is recognised exactly with its grammar`() async throws {
        let corpus = try TestInput.sharedCorpus.path()
        let recognizer = try await TestAudio.recognizer(.grammar(path: TestAudio.testData + "/goforward.gram"))
        let hypothesis = try await TestAudio.decode(try TestAudio.wav(corpus + "/ps_goforward.wav"), with: recognizer)
        #expect(hypothesis.text == "go forward ten meters")
    }

    /// cards.transcription lines look like `<s> ten of clubs  </s> (001)`.
    static let cardsTranscripts: [(file: String, text: String)] = {
        let dir = TestAudio.testData + "/cards"
        guard let text = try? String(contentsOfFile: dir + "/cards.transcription", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ").map(String.init)
            guard let id = words.last?.trimmingCharacters(in: CharacterSet(charactersIn: "()")) else { return nil }
            let spoken = words.filter { $0 != "<s>" && $0 != "</s>" && !$0.hasPrefix("(") }
            return (dir + "/\(id).wav", spoken.joined(separator: " "))
        }
    }()

    @Test func `every cards clip is recognised exactly with the cards grammar`() async throws {
        #expect(Self.cardsTranscripts.count == 5)
        let recognizer = try await TestAudio.recognizer(.grammar(path: TestAudio.testData + "/cards/cards.gram"))
        // One warm decoder for all clips, as the daemon keeps it.
        for (file, expected) in Self.cardsTranscripts {
            let hypothesis = try await TestAudio.decode(try TestAudio.wav(file), with: recognizer)
            #expect(hypothesis.text == expected, "\(file)")
        }
    }

    /// espeak-ng speech is far from what the acoustic model was trained on: its "seven" alone and a leading
    /// "nine" are heard as other digits, so these strings are ones its voice renders recognisably.
    @Test(arguments: ["four two", "one seven nine", "oh four one nine", "two five eight six zero"])
    func `synthesised digit strings are recognised with the digits grammar`(digits: String) async throws {
        let recognizer = try await TestAudio.recognizer(.grammar(path: TestAudio.projectModels + "/grammars/digits.gram"))
        let hypothesis = try await TestAudio.decode(try await SynthesizedSpeech.samples(digits), with: recognizer)
        #expect(hypothesis.text == digits)
    }

    /// fsdd_9_theo_0 is left out: 0.38 s of 8 kHz-band audio, too short for PocketSphinx's voice detector.
    @Test(.requires(.sharedCorpus), arguments: [("fsdd_3_jackson_0.wav", "three"), ("sr_english_123.wav", "one two three")])
    func `recorded digits from the corpus are recognised with the digits grammar`(file: String, expected: String)
        async throws
    {
        let corpus = try TestInput.sharedCorpus.path()
        let recognizer = try await TestAudio.recognizer(.grammar(path: TestAudio.projectModels + "/grammars/digits.gram"))
        let hypothesis = try await TestAudio.decode(try TestAudio.wav(corpus + "/" + file), with: recognizer)
        #expect(hypothesis.text == expected)
    }

    @Test(arguments: ["stop talking", "pause", "resume", "cancel", "never mind", "new conversation", "speak slower"])
    func `synthesised Talk commands are recognised with the talk-commands grammar`(command: String) async throws {
        let path = TestAudio.projectModels + "/grammars/talk-commands.gram"
        let recognizer = try await TestAudio.recognizer(.grammar(path: path))
        let hypothesis = try await TestAudio.decode(try await SynthesizedSpeech.samples(command), with: recognizer)
        #expect(hypothesis.text == command)
    }

    /// The answers of an approval, each the first utterance a fresh decoder hears, through the pipeline as the daemon
    /// runs it (the answers' grammar chosen before the microphone opens): every one gives its final. Both the
    /// daemon's dictation decoder and a grammar-mode one (which decodes its first seconds twice) are checked.
    @Test(arguments: ["allow once", "allow always", "deny", "cancel", "repeat"], [false, true])
    func `each answer is the final of a fresh decoder's first utterance in the answers' grammar`(answer: String, grammarMode: Bool)
        async throws
    {
        let mode: RecognitionMode = grammarMode ? .grammar(path: TestAudio.projectModels + "/grammars/talk-commands.gram") : .dictation()
        let recognizer = try await TestAudio.recognizer(mode)
        let path = try SpeechTestAudio.writeTemporaryWAV(try await SynthesizedSpeech.samples(answer), name: "answer")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let device = FileCaptureDevice(path: path, options: .init(pacing: .asFastAsPossible, trailingSilenceMs: 1000), logger: TestAudio.logger)
        let pipeline = try UtterancePipeline(capture: device, recognizer: recognizer, timing: .streamTime, logger: TestAudio.logger)
        await pipeline.useGrammar(GrammarSwitchTests.grammar())
        var finals: [String] = []
        var partials: [String] = []
        for await event in try await pipeline.start() {
            if case .final(let result) = event { finals.append(result.hypothesis.text) }
            if case .partial(let text, _) = event { partials.append(text) }
        }
        #expect(finals == [answer], "partials \(partials)")
    }
}
