import Foundation
import TalkLogging
import TalkTestSupport
import Testing

@testable import SpeechRecognition

/// `openclaw-talk bench` run as a user runs it, and the dictation WER over the real-speech dev set.
@Suite struct BenchCommandTests {
    /// A manifest in a temporary folder over clips copied from pocketsphinx-testdata.
    private func makeManifest(rows: [String], header: String = "file\ttranscript\tnote") throws -> (dir: URL, path: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("clips"), withIntermediateDirectories: true)
        for n in [1, 3] {
            try FileManager.default.copyItem(atPath: SpeechTestAudio.cards(n), toPath: dir.appendingPathComponent("clips/card\(n).wav").path)
        }
        let path = dir.appendingPathComponent("manifest.tsv").path
        try ([header] + rows).joined(separator: "\n").appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
        return (dir, path)
    }

    @Test func `bench is the default subcommand and its JSON has exactly the promised fields`() async throws {
        let (dir, path) = try makeManifest(rows: ["clips/card1.wav\tTen of clubs.\tx", "clips/card3.wav\tseven of clubs\ty"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try await BuiltCommand.run(["bench", path, "--json", "--baseline", "--grammar", SpeechTestAudio.testData + "/cards/cards.gram"])
        try #require(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["utterances", "words", "wer", "rtf", "finalize_ms", "end_to_final_ms", "cpu_seconds",
                                     "peak_rss_mb", "files", "baseline"])
        #expect(object["words"] as? Int == 6)
        for key in ["finalize_ms", "end_to_final_ms"] {
            #expect(Set((object[key] as? [String: Any])?.keys ?? [:].keys) == ["p50", "p95", "max"])
        }
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.count == 2)
        #expect(files.allSatisfy { Set($0.keys) == ["file", "reference", "hypothesis", "errors", "finalize_ms", "words", "baseline_errors"] })
        #expect(files.first?["file"] as? String == "clips/card1.wav")
        let errors = files.compactMap { $0["errors"] as? Int }.reduce(0, +)
        #expect(abs((object["wer"] as? Double ?? -1) - Double(errors) / 6) < 1e-9, "WER is errors summed over reference words")
        let baseline = try #require(object["baseline"] as? [String: Any])
        #expect(baseline["engine"] as? String == "pocketsphinx_continuous")
        #expect((baseline["wall_seconds"] as? Double ?? 0) > 0)
        #expect(baseline["wer"] is Double)
        let baselineErrors = files.compactMap { $0["baseline_errors"] as? Int }.reduce(0, +)
        #expect(abs((baseline["wer"] as? Double ?? -1) - Double(baselineErrors) / 6) < 1e-9, "the baseline's WER is its errors per clip summed")
        #expect((object["rtf"] as? Double ?? 0) > 0)
    }

    @Test func `--report writes the JSON with the run's date, machine and command, and still prints the table`() async throws {
        let (dir, path) = try makeManifest(rows: ["clips/card1.wav\tten of clubs\tx"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let folder = dir.appendingPathComponent("report").path
        let r = try await BuiltCommand.run(["bench", "speech", path, "--grammar", SpeechTestAudio.testData + "/cards/cards.gram", "--report", folder])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("WER "))
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/bench-speech-grammar.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["wer"] is Double)
        let run = try #require(object["run"] as? [String: Any])
        #expect((run["command"] as? String)?.hasPrefix("openclaw-talk bench speech \(path) --grammar ") == true, "\(run)")
        #expect((run["machine"] as? String)?.contains(" cores, ") == true, "\(run)")
        #expect((run["version"] as? String)?.hasPrefix("openclaw-talk ") == true, "\(run)")
        #expect((run["date"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) } != nil, "\(run)")
    }

    @Test func `without JSON it prints a readable table`() async throws {
        let (dir, path) = try makeManifest(rows: ["clips/card1.wav\tten of clubs\tx"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try await BuiltCommand.run(["bench", "speech", path, "--grammar", SpeechTestAudio.testData + "/cards/cards.gram"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("WER ") && r.stdout.contains("finalize_ms") && r.stdout.contains("clips/card1.wav"))
    }

    @Test(arguments: [
        (["clips/card1.wav\tten of clubs\tx", "clips/none.wav\tfive\ty"], "file\ttranscript\tnote", "line 3"),
        (["clips/card1.wav\tten of clubs\tx", "clips/card3.wav"], "file\ttranscript\tnote", "line 3"),
        (["clips/card1.wav\tten of clubs"], "file\ttext", "'transcript'"),
    ])
    func `a bad manifest stops the run with an error naming the row`(rows: [String], header: String, mention: String) async throws {
        let (dir, path) = try makeManifest(rows: rows, header: header)
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try await BuiltCommand.run(["bench", path, "--json"])
        #expect(r.status == 1)
        #expect(r.stderr.contains(mention), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    /// Measured 44.4-45.1 % with the streaming tuning (pocketsphinx_continuous: 46.3-46.6 %); the bound catches regressions.
    @Test(.requires(.sharedCorpus)) func `dictation WER over the real-speech dev set stays below 46 percent`() async throws {
        let corpus = URL(fileURLWithPath: try TestInput.sharedCorpus.path())
        let logger = Logger(label: "test.bench")
        let manifest = try BenchManifest.load(path: corpus.appendingPathComponent("manifest.tsv").path)
        let recognizer = try await offPool {
            try PocketSphinxRecognizer(configuration: RecognizerConfiguration(tuning: .streaming(for: .dictation())), logger: logger)
        }
        let report = try await SpeechBenchmark(manifest: manifest, transcriber: FileTranscriber(recognizer: recognizer, logger: logger)).run()
        #expect(report.files.count == 36)
        #expect(report.wer < 0.46, "WER \(report.wer)")
    }
}
