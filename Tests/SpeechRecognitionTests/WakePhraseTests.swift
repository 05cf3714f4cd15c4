import Foundation
import TalkTestSupport
import Testing

@testable import SpeechRecognition

/// Wake-phrase spotting on real recordings: found where it is said, silent where it is not.
@Suite(.offPool) struct WakePhraseTests {
    static let withoutGoForward = [
        "/cards/001.wav", "/cards/005.wav", "/librivox/sense_and_sensibility_01_austen_64kb-0870.wav",
    ]

    /// Feeds audio frame by frame and reports whether any partial or the final hypothesis held the phrase,
    /// as the Talk loop watches partials to wake up.
    private func spotted(_ phrase: String, in audio: [Int16], by recognizer: PocketSphinxRecognizer) async throws
        -> Bool
    {
        try await recognizer.startUtterance()
        var found = false
        for start in stride(from: 0, to: audio.count, by: 320) {
            _ = try await recognizer.process(Array(audio[start..<min(start + 320, audio.count)]))
            if let partial = await recognizer.partial(), partial.text.contains(phrase) { found = true }
        }
        let final = try await recognizer.endUtterance()
        return found || final.text.contains(phrase)
    }

    @Test func `a keyphrase is found in a clip that says it`() async throws {
        let recognizer = try await TestAudio.recognizer(.keyphrase("go forward", threshold: 1e-20))
        let audio = try TestAudio.raw(TestAudio.testData + "/goforward.raw")
        #expect(try await spotted("go forward", in: audio, by: recognizer))
    }

    @Test(arguments: withoutGoForward)
    func `a keyphrase is not found in clips that do not say it`(clip: String) async throws {
        let recognizer = try await TestAudio.recognizer(.keyphrase("go forward", threshold: 1e-20))
        let audio = try TestAudio.wav(TestAudio.testData + clip)
        #expect(try await spotted("go forward", in: audio, by: recognizer) == false)
    }

    @Test func `a keyword list spots its phrases and only where they are said`() async throws {
        let scratch = try RecognizerErrorTests.Scratch()
        let list = try scratch.write("wake.kws", "go forward /1e-20/\nqueen of hearts /1e-20/\n")
        let recognizer = try await TestAudio.recognizer(.keywordList(path: list))
        let goForward = try TestAudio.raw(TestAudio.testData + "/goforward.raw")
        #expect(try await spotted("go forward", in: goForward, by: recognizer))
        for clip in Self.withoutGoForward {
            let audio = try TestAudio.wav(TestAudio.testData + clip)
            #expect(try await spotted("go forward", in: audio, by: recognizer) == false, "\(clip)")
        }
    }

    @Test func `the project's wake list loads and stays quiet on speech without it`() async throws {
        let recognizer = try await TestAudio.recognizer(.keywordList(path: TestAudio.projectModels + "/keyphrases/wake.kws"))
        let clips =
            Self.withoutGoForward + ["/cards/002.wav", "/librivox/sense_and_sensibility_01_austen_64kb-0880.wav"]
        for clip in clips {
            let audio = try TestAudio.wav(TestAudio.testData + clip)
            let final = try await TestAudio.decode(audio, with: recognizer)
            #expect(final.text.isEmpty, "\(clip): \(final.text)")
        }
        let goForward = try TestAudio.raw(TestAudio.testData + "/goforward.raw")
        #expect(try await TestAudio.decode(goForward, with: recognizer).text.isEmpty)
    }

    static let projectWakeList = TestAudio.projectModels + "/keyphrases/wake.kws"

    /// Which of the project's wake phrases the recogniser spots in `audio` (partials or final).
    private func wakePhrases(in audio: [Int16]) async throws -> Set<String> {
        let recognizer = try await TestAudio.recognizer(.keywordList(path: Self.projectWakeList))
        var found: Set<String> = []
        for phrase in ["hey open claw", "okay claw"] where try await spotted(phrase, in: audio, by: recognizer) {
            found.insert(phrase)
        }
        return found
    }

    /// espeak-ng's Klatt voices at 160 words a minute: the synthetic speech PocketSphinx's acoustic model
    /// hears best (its default voice is not recognised well enough to tune on).
    static let voices = ["en-us+klatt", "en-us+klatt2", "en-us+klatt4", "en-us+klatt6"]

    @Test(arguments: voices)
    func `the project's wake phrases are spotted in speech that says them`(voice: String) async throws {
        for phrase in ["hey open claw", "okay claw"] {
            let audio = try await SynthesizedSpeech.samples(phrase, voice: voice, wordsPerMinute: 160)
            #expect(try await wakePhrases(in: audio) == [phrase], "\(voice): '\(phrase)'")
        }
    }

    @Test(arguments: voices)
    func `the project's wake phrases are not spotted in speech with words like theirs`(voice: String) async throws {
        for sentence in ["please open the door", "okay, call me later", "the cat has a sharp claw", "hey, how are you"] {
            let audio = try await SynthesizedSpeech.samples(sentence, voice: voice, wordsPerMinute: 160)
            #expect(try await wakePhrases(in: audio).isEmpty, "\(voice): '\(sentence)'")
        }
    }

    @Test func `a wake phrase said between recorded sentences is spotted there`() async throws {
        let before = try SpeechTestAudio.speech(SpeechTestAudio.librivox0930)
        let after = try SpeechTestAudio.speech(SpeechTestAudio.cards(1))
        let pause = SynthesizedSpeech.silence(ms: 400)
        for phrase in ["hey open claw", "okay claw"] {
            let wake = try await SynthesizedSpeech.samples(phrase, voice: "en-us+klatt", wordsPerMinute: 160)
            let audio = pause + before + pause + wake + pause + after + pause
            #expect(try await wakePhrases(in: audio) == [phrase], "'\(phrase)'")
        }
    }

    @Test(.requires(.sharedCorpus))
    func `the project's wake list stays quiet on every corpus recording and spots a phrase spliced between them`() async throws {
        let corpus = try TestInput.sharedCorpus.path()
        let manifest = try String(contentsOfFile: corpus + "/manifest.tsv", encoding: .utf8)
        let clips = manifest.split(separator: "\n").dropFirst().map { String($0.split(separator: "\t")[0]) }
        try #require(clips.count >= 30)
        for clip in clips {
            let audio = try TestAudio.wav(corpus + "/" + clip)
            #expect(try await wakePhrases(in: audio).isEmpty, "\(clip)")
        }
        // Real speakers around the phrase: it is spotted in running speech, and nothing else is.
        let pause = SynthesizedSpeech.silence(ms: 400)
        for (index, phrase) in ["hey open claw", "okay claw"].enumerated() {
            let before = try TestAudio.wav(corpus + "/" + clips[index * 7])
            let after = try TestAudio.wav(corpus + "/" + clips[index * 7 + 3])
            let wake = try await SynthesizedSpeech.samples(phrase, voice: "en-us+klatt", wordsPerMinute: 160)
            #expect(try await wakePhrases(in: before + pause + wake + pause + after) == [phrase],
                    "'\(phrase)' between \(clips[index * 7]) and \(clips[index * 7 + 3])")
        }
    }

    @Test(.requires(.sharedCorpus))
    func `a recorded command phrase is spotted in the corpus clips that hold it and no others`() async throws {
        let corpus = try TestInput.sharedCorpus.path()
        let recognizer = try await TestAudio.recognizer(.keyphrase("turn on", threshold: 1e-2))
        let manifest = try String(contentsOfFile: corpus + "/manifest.tsv", encoding: .utf8)
        for row in manifest.split(separator: "\n").dropFirst() {
            let columns = row.split(separator: "\t").map(String.init)
            let audio = try TestAudio.wav(corpus + "/" + columns[0])
            let saysIt = columns[1].contains("turn on")
            #expect(try await spotted("turn on", in: audio, by: recognizer) == saysIt, "\(columns[0])")
        }
    }
}
