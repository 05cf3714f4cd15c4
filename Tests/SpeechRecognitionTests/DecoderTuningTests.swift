import Testing

@testable import SpeechRecognition

@Suite struct DecoderTuningTests {
    @Test func `an extra option replaces a tuned one instead of repeating it`() {
        var tuning = DecoderTuning.recommended(for: .dictation())
        tuning.additionalArguments += ["-maxwpf", "-1", "-fwdflat", "yes"]
        let names = tuning.arguments.map(\.0)
        #expect(Set(names).count == names.count)
        #expect(tuning.arguments.first { $0.0 == "-maxwpf" }?.1 == "-1")
        #expect(tuning.arguments.first { $0.0 == "-fwdflat" }?.1 == "yes")
    }

    @Test func `grammar mode leaves the language model out`() throws {
        let models = ModelPaths(acousticModel: "/am", dictionary: "/d.dict", languageModel: "/lm.bin")
        let grammar = TestAudio.testData + "/goforward.gram"
        let arguments = try DecoderArguments.make(
            configuration: RecognizerConfiguration(mode: .grammar(path: grammar)), models: models)
        #expect(!arguments.contains("-lm") && arguments.contains("-jsgf"))
    }
}
