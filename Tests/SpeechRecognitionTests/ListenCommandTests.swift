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

    @Test(.requires(.builtBinary)) func `a file as the microphone gives start, growing partials, the final text and the end, in order`() async throws {
        _ = try TestInput.builtBinary.path()
        let r = try await BuiltCommand.run(["listen", "--input", SpeechTestAudio.goForward, "--fast", "--grammar", grammar, "--json"])
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

    @Test(.requires(.builtBinary)) func `--partials shows the growing text on stderr and only the final line on stdout`() async throws {
        _ = try TestInput.builtBinary.path()
        let r = try await BuiltCommand.run(["listen", "--input", SpeechTestAudio.goForward, "--fast", "--grammar", grammar, "--partials"])
        #expect(r.status == 0, "\(r.stderr)")
        let partials = r.stderr.split(separator: "\n").filter { $0.hasPrefix("… ") }.map { String($0.dropFirst(2)) }
        #expect(partials.count >= 2, "stderr: \(r.stderr)")
        #expect(partials.last == "go forward ten meters", "\(partials)")
        // Each partial grows out of the words before it settle: the last one holds the first one's first word.
        #expect(partials.first.map { partials.last?.hasPrefix($0.split(separator: " ").first.map(String.init) ?? "?") } == true)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.hasSuffix("  go forward ten meters") == true, "stdout: \(r.stdout)")
        // Without the flag no partial is shown.
        let quiet = try await BuiltCommand.run(["listen", "--input", SpeechTestAudio.goForward, "--fast", "--grammar", grammar])
        #expect(quiet.status == 0)
        #expect(!quiet.stderr.contains("… "), "stderr: \(quiet.stderr)")
    }

    @Test(.requires(.builtBinary)) func `--record-dir keeps one playable Ogg Opus file per utterance, as long as the utterance`() async throws {
        _ = try TestInput.builtBinary.path()
        let clip = try EndpointerTests.threeUtterances()
        let input = try SpeechTestAudio.writeTemporaryWAV(clip.withNoise(dbfs: -70), name: "listen-record")
        defer { try? FileManager.default.removeItem(atPath: input) }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-talk-record-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try await BuiltCommand.run(["listen", "--input", input, "--fast", "--grammar", grammar, "--json", "--record-dir", dir])
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
        let command = try BuiltCommand()
        defer { command.removeHome() }
        // The headless server's null sink `vsink` is monitored by the virtual microphone `vmic`.
        let listen = try command.start(["listen", "--source", "vmic", "--seconds", "12", "--grammar", grammar])
        #expect(await listen.waitForStderr("Listening on vmic"), "listen stderr: \(listen.stderrSoFar)")
        let play = try await command.run(["play", SpeechTestAudio.goForward, "--sink", "vsink"])
        #expect(play.status == 0, "play: \(play.stderr)")
        let heard = try await listen.finish(timeout: .seconds(60))
        #expect(heard.status == 0, "listen stderr: \(heard.stderr)")
        let lines = heard.stdout.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.hasSuffix("  go forward ten meters") == true, "listen stdout: \(heard.stdout)")
    }
}
