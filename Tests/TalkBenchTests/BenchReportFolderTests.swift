import Foundation
import SessionBridge
import TalkBench
import Testing

/// `bench ... --report DIR` without the command line: the figures written with the run's record beside them.
@Suite struct BenchReportFolderTests {
    static func temporaryFolder() throws -> String { try BenchFolder.temporary() }

    @Test func `the figures are written as bench-NAME.json with the run's date, machine, command and version`() throws {
        let root = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = BenchReportFolder(folder: root + "/report")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let run = BenchReportFolder.runRecord(arguments: ["bench", "speech", "my clips.tsv", "--json"], version: "openclaw-talk 1.2.3", now: now)
        let path = try folder.record(#"{"wer": 0.25, "files": [1, 2]}"#, name: "speech", run: run)
        #expect(path == root + "/report/bench-speech.json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect(object["wer"] as? Double == 0.25 && (object["files"] as? [Int]) == [1, 2])
        let record = try #require(object["run"] as? [String: Any])
        #expect(record["command"] as? String == "openclaw-talk bench speech 'my clips.tsv' --json")
        #expect(record["version"] as? String == "openclaw-talk 1.2.3")
        #expect(record["date"] as? String == ISO8601DateFormatter().string(from: now))
        #expect((record["machine"] as? String)?.contains(" \(ProcessInfo.processInfo.activeProcessorCount) cores, ") == true, "\(record)")
    }

    @Test func `what is not one JSON object is refused and nothing is written`() throws {
        let root = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = BenchReportFolder(folder: root)
        for text in ["[1, 2]", "not json", ""] {
            #expect(throws: TalkBenchFailure.self) { try folder.record(text, name: "x", run: .object([:])) }
        }
        #expect(!FileManager.default.fileExists(atPath: root + "/bench-x.json"))
    }
}
