import AudioIO
import Foundation
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `OPENCLAW_TALK_AEC_RECORD=DIR openclaw-talk run` and `openclaw-talk bench aec --replay DIR`: what a user
/// whose daemon interrupts itself runs, and sends.
@Suite struct AecRecordCommandTests {
    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `a session records what its echo canceller heard and played, and bench aec --replay plays it back`() async throws {
        let gw = try await RunCommandTests.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let folder = command.home + "/aec"
        let r = try await command.run(
            try RunCommandTests.arguments(gw, output: command.home + "/out.wav", extra: ["--max-turns", "1", "--aec", "webrtc"]),
            environment: ["OPENCLAW_TALK_AEC_RECORD": folder])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("Echo cancellation recorded"), "\(r.stderr)")

        let cleaned = command.home + "/cleaned.wav"
        let replay = try await command.run(["bench", "aec", "--replay", folder, "--json", "--output", cleaned])
        #expect(replay.status == 0, "stderr: \(replay.stderr)")
        let report = try #require(JSONValue.parse(Array(replay.stdout.utf8)), "not JSON: \(replay.stdout)")
        let seconds = try #require(report["seconds"].flatMap { if case .double(let d) = $0 { d } else { $0.intValue.map(Double.init) } })
        let playing = try #require(report["playingSeconds"].flatMap { if case .double(let d) = $0 { d } else { $0.intValue.map(Double.init) } })
        // The clip (2.8 s) and its reply ("echo: go forward ten meters", about 2 s) were both heard.
        #expect(seconds > 4, "\(replay.stdout)")
        #expect(playing > 1 && playing < seconds, "\(replay.stdout)")
        #expect(report["openings"]?.arrayValue != nil, "\(replay.stdout)")
        let out = try WAVAudio.read(path: cleaned)
        #expect(abs(out.durationSeconds - seconds) < 0.03, "\(out.durationSeconds) s written for \(seconds) s replayed")
        // A file for a microphone hears no echo: the cleaned capture still holds the user's clip.
        #expect(out.samples.contains { abs($0) > 0.05 })
    }

    @Test(.requires(.builtBinary))
    func `bench aec --replay of a folder that holds no recording fails with what is missing`() async throws {
        let missing = try await BuiltCommand.run(["bench", "aec", "--replay", "/nonexistent-aec-recording"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("/nonexistent-aec-recording/capture.wav"), "\(missing.stderr)")
        let stray = try await BuiltCommand.run(["bench", "aec", "--output", "/tmp/x.wav"])
        #expect(stray.status != 0 && stray.stderr.contains("'--output' goes with '--replay DIR'"), "\(stray.stderr)")
    }
}
