import Foundation
import TalkTestSupport
import Testing

@testable import SpeechRecognition

/// Bad models, grammars and wake phrases give a `SpeechRecognitionError` that says what is wrong; never a
/// crash and never a recogniser that silently hears nothing.
@Suite struct RecognizerErrorTests {
    /// A scratch folder removed when the test ends.
    final class Scratch {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("speech-err-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        func write(_ name: String, _ text: String) throws -> String {
            let file = path + "/" + name
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            return file
        }
    }

    /// The error of loading a recogniser, loaded on a thread of its own (as `TestAudio.recognizer`).
    private func makeError(_ configuration: RecognizerConfiguration) async -> SpeechRecognitionError? {
        do {
            _ = try await offPool { try PocketSphinxRecognizer(configuration: configuration, logger: TestAudio.logger) }
            return nil
        } catch let error as SpeechRecognitionError {
            return error
        } catch {
            Issue.record("unexpected error type: \(error)")
            return nil
        }
    }

    @Test func `a model folder that does not exist is named in the error`() async throws {
        let error = await makeError(RecognizerConfiguration(modelDirectory: "/nonexistent/models"))
        #expect(error == .modelDirectoryNotFound(path: "/nonexistent/models"))
        #expect(error?.description.contains("/nonexistent/models") == true)
    }

    @Test func `no model anywhere lists every place searched and the Debian package`() throws {
        let error = #expect(throws: SpeechRecognitionError.self) {
            try ModelLocator(searchDirectories: ["/nonexistent/a", "/nonexistent/b"]).locate(for: .dictation())
        }
        guard case .modelNotFound(_, let searched)? = error else {
            Issue.record("expected modelNotFound, got \(String(describing: error))")
            return
        }
        #expect(searched.contains("/nonexistent/a/en-us/en-us") && searched.contains("/nonexistent/b"))
        #expect(error?.description.contains("pocketsphinx-en-us") == true)
    }

    @Test func `an empty model folder is an error, not a silent fallback`() async throws {
        let scratch = try Scratch()
        let error = await makeError(RecognizerConfiguration(modelDirectory: scratch.path))
        guard case .modelNotFound(let part, let searched)? = error else {
            Issue.record("expected modelNotFound, got \(String(describing: error))")
            return
        }
        #expect(part.contains("acoustic model"))
        #expect(searched.allSatisfy { $0.hasPrefix(scratch.path) })
    }

    /// Copies Debian's acoustic model into a scratch model folder and lets `damage` break one file.
    private func brokenModel(_ damage: (String) throws -> Void) async throws -> (Scratch, SpeechRecognitionError?) {
        let scratch = try Scratch()
        let acoustic = scratch.path + "/en-us/en-us"
        try FileManager.default.createDirectory(atPath: scratch.path + "/en-us", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/usr/share/pocketsphinx/model/en-us/en-us", toPath: acoustic)
        try damage(acoustic)
        let grammar = TestAudio.testData + "/goforward.gram"
        return (
            scratch, await makeError(RecognizerConfiguration(mode: .grammar(path: grammar), modelDirectory: scratch.path))
        )
    }

    @Test func `a truncated mdef gives a broken-model error naming the file`() async throws {
        let (scratch, error) = try await brokenModel { acoustic in
            let mdef = acoustic + "/mdef"
            let head = try Data(contentsOf: URL(fileURLWithPath: mdef)).prefix(1000)
            try head.write(to: URL(fileURLWithPath: mdef))
        }
        guard case .modelBroken(let path, let reason)? = error else {
            Issue.record("expected modelBroken, got \(String(describing: error))")
            return
        }
        #expect(path.hasPrefix(scratch.path))
        #expect(reason.contains("mdef"))
    }

    @Test func `a model missing its means file is broken`() async throws {
        let (_, error) = try await brokenModel { acoustic in try FileManager.default.removeItem(atPath: acoustic + "/means") }
        guard case .modelBroken(_, let reason)? = error else {
            Issue.record("expected modelBroken, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("means"))
    }

    @Test func `a grammar with a syntax error is rejected with PocketSphinx's reason`() async throws {
        let scratch = try Scratch()
        let file = try scratch.write("bad.gram", "#JSGF V1.0;\ngrammar bad;\npublic <cmd> = stop | ( pause ;\n")
        let error = await makeError(RecognizerConfiguration(mode: .grammar(path: file)))
        guard case .grammarInvalid(let path, let details)? = error else {
            Issue.record("expected grammarInvalid, got \(String(describing: error))")
            return
        }
        #expect(path == file && !details.isEmpty)
        print("syntax error: \(error.map(String.init(describing:)) ?? "")")
    }

    @Test func `a grammar word missing from the dictionary is named`() async throws {
        let scratch = try Scratch()
        let file = try scratch.write("unknown.gram", "#JSGF V1.0;\ngrammar unknown;\npublic <cmd> = stop | florbix;\n")
        let error = await makeError(RecognizerConfiguration(mode: .grammar(path: file)))
        guard case .grammarInvalid(_, let details)? = error else {
            Issue.record("expected grammarInvalid, got \(String(describing: error))")
            return
        }
        #expect(details.contains { $0.contains("florbix") })
    }

    @Test func `a missing grammar file is reported before PocketSphinx runs`() async {
        let error = await makeError(RecognizerConfiguration(mode: .grammar(path: "/nonexistent/commands.gram")))
        #expect(error == .grammarNotFound(path: "/nonexistent/commands.gram"))
    }

    @Test func `a wake phrase with a word missing from the dictionary is rejected`() async {
        let error = await makeError(RecognizerConfiguration(mode: .keyphrase("hey florbix")))
        guard case .keyphraseInvalid(_, let details)? = error else {
            Issue.record("expected keyphraseInvalid, got \(String(describing: error))")
            return
        }
        #expect(details.contains { $0.contains("florbix") })
    }

    @Test func `a missing keyword list is reported`() async {
        let error = await makeError(RecognizerConfiguration(mode: .keywordList(path: "/nonexistent/wake.kws")))
        #expect(error == .keywordListNotFound(path: "/nonexistent/wake.kws"))
    }

    @Test func `audio before startUtterance is refused`() async throws {
        let recognizer = try await TestAudio.recognizer(.grammar(path: TestAudio.testData + "/goforward.gram"))
        await #expect(throws: SpeechRecognitionError.notInUtterance(operation: "process")) {
            _ = try await recognizer.process([0, 0, 0])
        }
    }
}
