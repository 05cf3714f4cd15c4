import AudioIO
import Foundation
import TalkTestSupport
import Testing

/// `openclaw-talk listen`: the capture half of Talk mode, from a file and from a (virtual) microphone,
/// through the binary built beside these tests.
@Suite(.serialized) struct ListenCommandTests {
    private let grammar = SpeechTestAudio.testData + "/goforward.gram"

    private static func jsonEvents(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test(.requires(.builtBinary)) func `a file as the microphone gives start, growing partials, the final text and the end, in order`() throws {
        _ = try TestInput.builtBinary.path()
        let r = try BuiltTool.run(["listen", "--input", SpeechTestAudio.goForward, "--fast", "--grammar", grammar, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let events = Self.jsonEvents(r.stdout)
        let kinds = events.compactMap { $0["event"] as? String }
        #expect(kinds.first == "speechStarted" && kinds.last == "finished", "\(kinds)")
        #expect(kinds.filter { $0 == "final" }.count == 1)
        let partials = events.filter { $0["event"] as? String == "partial" }.compactMap { $0["text"] as? String }
        #expect(partials.count >= 2 && partials.last == "go forward ten meters", "\(partials)")
        let final = events.first { $0["event"] as? String == "final" }
        #expect(final?["text"] as? String == "go forward ten meters")
    }

    @Test(.requires(.builtBinary)) func `--partials shows the growing text on stderr and only the final line on stdout`() throws {
        _ = try TestInput.builtBinary.path()
        let r = try BuiltTool.run(["listen", "--input", SpeechTestAudio.goForward, "--fast", "--grammar", grammar, "--partials"])
        #expect(r.status == 0, "\(r.stderr)")
        let partials = r.stderr.split(separator: "\n").filter { $0.hasPrefix("… ") }.map { String($0.dropFirst(2)) }
        #expect(partials.count >= 2, "stderr: \(r.stderr)")
        #expect(partials.last == "go forward ten meters", "\(partials)")
        // Each partial grows out of the words before it settle: the last one holds the first one's first word.
        #expect(partials.first.map { partials.last?.hasPrefix($0.split(separator: " ").first.map(String.init) ?? "?") } == true)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.hasSuffix("  go forward ten meters") == true, "stdout: \(r.stdout)")
        // Without the flag no partial is shown.
        let quiet = try BuiltTool.run(["listen", "--input", SpeechTestAudio.goForward, "--fast", "--grammar", grammar])
        #expect(quiet.status == 0)
        #expect(!quiet.stderr.contains("… "), "stderr: \(quiet.stderr)")
    }

    @Test(.requires(.builtBinary)) func `--record-dir keeps one playable Ogg Opus file per utterance, as long as the utterance`() throws {
        _ = try TestInput.builtBinary.path()
        let clip = try EndpointerTests.threeUtterances()
        let input = try SpeechTestAudio.writeTemporaryWAV(clip.withNoise(dbfs: -70), name: "listen-record")
        defer { try? FileManager.default.removeItem(atPath: input) }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-talk-record-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try BuiltTool.run(["listen", "--input", input, "--fast", "--grammar", grammar, "--json", "--record-dir", dir])
        #expect(r.status == 0, "\(r.stderr)")
        let events = Self.jsonEvents(r.stdout)
        let finals = events.filter { $0["event"] as? String == "final" }
        let closes = events.filter { $0["event"] as? String == "speechEnded" }.compactMap { $0["closedAt"] as? Double }
        try #require(finals.count == clip.speech.count && closes.count == finals.count, "\(r.stdout)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(files.count == finals.count && files.allSatisfy { $0.hasSuffix(".opus") }, "\(files)")
        let preRoll = 0.4  // EndpointerSettings.default.preRollMs: the recording starts that far before the speech
        for (final, closedAt) in zip(finals, closes) {
            let path = try #require(final["audio"] as? String, "no audio path in \(final)")
            #expect(path.hasPrefix(dir))
            let head = try #require(FileHandle(forReadingAtPath: path)).readData(ofLength: 36)
            #expect(head.prefix(4) == Data("OggS".utf8) && head.range(of: Data("OpusHead".utf8)) != nil, "\(path) is not Ogg Opus")
            let audio = try AudioFileReader.readMono(path: path)
            let start = try #require(final["start"] as? Double)
            let expected = closedAt - start + preRoll
            #expect(abs(audio.durationSeconds - expected) < 0.1, "\(path): \(audio.durationSeconds) s, utterance \(expected) s")
            #expect(audio.samples.contains { $0.magnitude > 3000 }, "\(path) holds no speech")
        }
    }

    @Test(.requires(.pulseServer, .builtBinary)) func `speech played into the speaker is heard on the virtual microphone and recognised`() async throws {
        _ = try TestInput.pulseServer.path()
        let tool = try TestInput.builtBinary.path()
        // The headless server's null sink `vsink` is monitored by the virtual microphone `vmic`.
        let listen = try BackgroundTool(tool, ["listen", "--source", "vmic", "--seconds", "12", "--grammar", grammar])
        #expect(await listen.waitForStderr("Listening on vmic"), "listen stderr: \(listen.stderr)")
        let play = try await offPool { try BuiltTool.run(["play", SpeechTestAudio.goForward, "--sink", "vsink"]) as BuiltTool.Outcome }
        #expect(play.status == 0, "play: \(play.stderr)")
        let (status, stdout, stderr) = try await listen.finish()
        #expect(status == 0, "listen stderr: \(stderr)")
        let lines = stdout.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.hasSuffix("  go forward ten meters") == true, "listen stdout: \(stdout)")
    }
}

/// The built tool running while the test does something else; its output goes to files, so a chatty tool
/// never blocks on a full pipe.
private final class BackgroundTool: Sendable {
    private let process: Process
    private let outPath: String
    private let errPath: String

    init(_ tool: String, _ arguments: [String]) throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-talk-bg-\(UUID().uuidString)").path
        (outPath, errPath) = (base + ".out", base + ".err")
        FileManager.default.createFile(atPath: outPath, contents: nil)
        FileManager.default.createFile(atPath: errPath, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        try process.run()
    }

    var stderr: String { String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self) }

    /// Waits (bounded) until stderr holds `text`; false when it does not in time or the tool ended first.
    func waitForStderr(_ text: String, timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, process.isRunning {
            if stderr.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return stderr.contains(text)
    }

    /// Waits for the tool's own end (killing it after `timeout`): its exit status, stdout and stderr.
    func finish(timeout: Duration = .seconds(60)) async throws -> (Int32, String, String) {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { process.terminate() }
        let process = process
        try await offPool { process.waitUntilExit() }
        let stdout = String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self)
        let stderr = stderr
        try? FileManager.default.removeItem(atPath: outPath)
        try? FileManager.default.removeItem(atPath: errPath)
        return (process.terminationStatus, stdout, stderr)
    }
}

/// Blocking waits (a child's end) on a thread of their own, never on the cooperative pool the other suites
/// share. (The same helper as in the other test targets; TalkTestSupport is the place to share it.)
private func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in Thread { c.resume(with: Result { try body() }) }.start() }
}
