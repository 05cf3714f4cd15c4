import Foundation
import TalkTestSupport
import Testing

@testable import SpeechRecognition

@Suite struct ModelLocatorTests {
    @Test func `Debian's en-us model is found`() throws {
        let paths = try ModelLocator(searchDirectories: [ModelLocator.debianModelDirectory])
            .locate(for: .dictation())
        #expect(paths.acousticModel == "/usr/share/pocketsphinx/model/en-us/en-us")
        #expect(paths.dictionary == "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict")
        #expect(paths.languageModel == "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin")
    }

    @Test func `grammar and wake-phrase modes need no language model`() throws {
        let locator = ModelLocator(searchDirectories: [ModelLocator.debianModelDirectory])
        #expect(try locator.locate(for: .grammar(path: "x.gram")).languageModel == nil)
        #expect(try locator.locate(for: .keyphrase("hey")).languageModel == nil)
    }

    @Test func `a dictionary in an earlier folder wins over Debian's, part by part`() throws {
        let scratch = try RecognizerErrorTests.Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path + "/en-us", withIntermediateDirectories: true)
        let dictionary = try scratch.write("en-us/cmudict-en-us.dict", "stop S T AA P\ntalking T AO K IH NG\n")
        let paths = try ModelLocator(searchDirectories: [scratch.path, ModelLocator.debianModelDirectory])
            .locate(for: .dictation())
        #expect(paths.dictionary == dictionary)
        #expect(paths.acousticModel == "/usr/share/pocketsphinx/model/en-us/en-us")
    }

    @Test func `the project's models folder is found from the working directory or the executable`() throws {
        let fromDirectory = ModelLocator.projectModelDirectories(currentDirectory: TestInputs.packageRoot, executable: nil)
        #expect(fromDirectory == [TestAudio.projectModels])
        let fromBinary = ModelLocator.projectModelDirectories(currentDirectory: "/", executable: try TestInput.builtBinary.path())
        #expect(fromBinary == [TestAudio.projectModels])
    }

    @Test func `keyword list lines give their phrases without thresholds`() {
        let text = "hey open claw /1e-20/\n\n  okay claw   /1e-10/\nstop\n"
        #expect(WakePhrases.parseKeywordList(text) == ["hey open claw", "okay claw", "stop"])
    }
}
