import Foundation
import Testing

@testable import SpeechRecognition

@Suite struct ManifestTests {
    private func parse(_ text: String, present: Set<String> = ["/m/a.wav", "/m/sub/b.wav"]) throws -> BenchManifest {
        try BenchManifest.parse(text, path: "/m/manifest.tsv", folder: "/m") { present.contains($0) }
    }

    @Test func `rows resolve files against the manifest's folder and ignore other columns`() throws {
        let m = try parse("file\ttranscript\tlicence\na.wav\tgo forward\tBSD\n\nsub/b.wav\tten of clubs\tCC0\n")
        #expect(m.entries.map(\.path) == ["/m/a.wav", "/m/sub/b.wav"])
        #expect(m.entries.map(\.transcript) == ["go forward", "ten of clubs"])
        #expect(m.entries.map(\.line) == [2, 4])
    }

    @Test func `columns may come in any order`() throws {
        let m = try parse("speaker\ttranscript\tfile\nx\thello\ta.wav\n")
        #expect(m.entries.first?.file == "a.wav")
        #expect(m.entries.first?.transcript == "hello")
    }

    @Test(arguments: [
        ("file\ttranscript\na.wav\tok\nmissing.wav\thello\n", "line 3", "missing.wav"),
        ("file\ttranscript\na.wav\tok\na.wav go forward\n", "line 3", "malformed"),
        ("file\ttranscript\n\ttext\n", "line 2", "'file' field is empty"),
        ("name\ttranscript\na.wav\tok\n", "'file' column", "required"),
        ("file\ttext\na.wav\tok\n", "'transcript' column", "required"),
        ("", "empty", "header"),
        ("file\ttranscript\n", "no rows", "header"),
    ])
    func `a bad manifest gives an error naming the row and the problem`(text: String, names: String, problem: String) {
        do {
            _ = try parse(text)
            Issue.record("accepted a bad manifest")
        } catch {
            let message = String(describing: error)
            #expect(message.contains(names), "\(message)")
            #expect(message.contains(problem), "\(message)")
        }
    }

    @Test func `loading checks the audio files on disk`() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data().write(to: dir.appendingPathComponent("here.wav"))
        let path = dir.appendingPathComponent("manifest.tsv").path
        try "file\ttranscript\nhere.wav\tyes\ngone.wav\tno\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ManifestError.missingAudio(path: path, line: 3, file: dir.appendingPathComponent("gone.wav").path)) {
            try BenchManifest.load(path: path)
        }
    }
}
