import Foundation
import Testing

@testable import SpeechRecognition

@Suite struct ModelLocatorTests {
    @Test func `Debian's en-us model is found`() throws {
        let paths = try ModelLocator(searchDirectories: [ModelLocator.debianModelDirectory])
            .locate(for: .dictation())
        #expect(paths.acousticModel == "/usr/share/pocketsphinx/model/en-us/en-us")
        #expect(paths.languageModel == "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin")
    }
}
