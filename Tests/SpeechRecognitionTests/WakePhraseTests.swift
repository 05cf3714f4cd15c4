import Foundation
import Testing

@testable import SpeechRecognition

/// Wake-phrase spotting on real recordings: found where it is said, silent where it is not.
@Suite struct WakePhraseTests {
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
        let recognizer = try TestAudio.recognizer(.keyphrase("go forward", threshold: 1e-20))
        let audio = try TestAudio.raw(TestAudio.testData + "/goforward.raw")
        #expect(try await spotted("go forward", in: audio, by: recognizer))
    }

    @Test(arguments: withoutGoForward)
    func `a keyphrase is not found in clips that do not say it`(clip: String) async throws {
        let recognizer = try TestAudio.recognizer(.keyphrase("go forward", threshold: 1e-20))
        let audio = try TestAudio.wav(TestAudio.testData + clip)
        #expect(try await spotted("go forward", in: audio, by: recognizer) == false)
    }

    @Test func `a keyword list spots its phrases and only where they are said`() async throws {
        let scratch = try RecognizerErrorTests.Scratch()
        let list = try scratch.write("wake.kws", "go forward /1e-20/\nqueen of hearts /1e-20/\n")
        let recognizer = try TestAudio.recognizer(.keywordList(path: list))
        let goForward = try TestAudio.raw(TestAudio.testData + "/goforward.raw")
        #expect(try await spotted("go forward", in: goForward, by: recognizer))
        for clip in Self.withoutGoForward {
            let audio = try TestAudio.wav(TestAudio.testData + clip)
            #expect(try await spotted("go forward", in: audio, by: recognizer) == false, "\(clip)")
        }
    }

    @Test func `the project's wake list loads and stays quiet on speech without it`() async throws {
        let recognizer = try TestAudio.recognizer(.keywordList(path: TestAudio.projectModels + "/keyphrases/wake.kws"))
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

    @Test func `a recorded command phrase is spotted in the corpus clips that hold it and no others`() async throws {
        guard let corpus = TestAudio.corpusSpeech else {
            print("SKIPPED: ../shared not found: recorded wake phrase check not run")
            return
        }
        let recognizer = try TestAudio.recognizer(.keyphrase("turn on", threshold: 1e-2))
        let manifest = try String(contentsOfFile: corpus + "/manifest.tsv", encoding: .utf8)
        for row in manifest.split(separator: "\n").dropFirst() {
            let columns = row.split(separator: "\t").map(String.init)
            let audio = try TestAudio.wav(corpus + "/" + columns[0])
            let saysIt = columns[1].contains("turn on")
            #expect(try await spotted("turn on", in: audio, by: recognizer) == saysIt, "\(columns[0])")
        }
    }
}
