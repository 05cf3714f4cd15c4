import Foundation
import Testing

@testable import SpeechRecognition

@Suite struct GrammarRecognitionTests {
    @Test func `goforward is recognised exactly with its grammar`() async throws {
        let recognizer = try TestAudio.recognizer(.grammar(path: TestAudio.testData + "/goforward.gram"))
        let hypothesis = try await TestAudio.decode(try TestAudio.raw(TestAudio.testData + "/goforward.raw"), with: recognizer)
        #expect(hypothesis.text == "go forward ten meters")
        #expect(hypothesis.words.map(\.word) == ["go", "forward", "ten", "meters"])
    }

    @Test func `dictation gives plausible words for goforward`() async throws {
        let recognizer = try TestAudio.recognizer(.dictation())
        let hypothesis = try await TestAudio.decode(try TestAudio.raw(TestAudio.testData + "/goforward.raw"), with: recognizer)
        print("dictation:", hypothesis)
        #expect(hypothesis.text.contains("forward"))
    }
}
