import AudioIO
import Foundation
import TalkTestSupport
import Testing

@testable import SessionBridge

/// One Talk turn through the sound server, as a user has it: `openclaw-talk run --source --sink` against the
/// reference Gateway, the clip played into the speaker, whose monitor is the microphone, and the reply heard
/// on the speaker's monitor. It runs under PulseAudio (`make test`, in the recognition pass) and under PipeWire's
/// Pulse server (`make test-pipewire`). The speaker and microphone are the test's own null sink and its
/// remapped monitor, made as vsink and vmic are: suites running beside it play into vsink.
@Suite(.serialized) struct LiveTalkTurnTests {
    static func pactl(_ arguments: [String]) async throws -> String {
        let (status, output) = try await offPool { try ChildProcess.run("/usr/bin/pactl", arguments, environment: TestInputs.environment) }
        guard status == 0 else { throw CommandFailure("pactl \(arguments.joined(separator: " ")) exited with \(status)") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Loads a null sink `<name>sink` and `<name>mic` on its monitor, runs `body`, unloads both.
    static func withDevices<T>(_ name: String, _ body: (_ sink: String, _ mic: String) async throws -> T) async throws -> T {
        let (sink, mic) = (name + "sink", name + "mic")
        let sinkModule = try await pactl(["load-module", "module-null-sink", "sink_name=\(sink)", "rate=16000", "channels=1"])
        defer { _ = try? ChildProcess.run("/usr/bin/pactl", ["unload-module", sinkModule], environment: TestInputs.environment) }
        let micModule = try await pactl(["load-module", "module-remap-source", "master=\(sink).monitor", "source_name=\(mic)", "channels=1"])
        defer { _ = try? ChildProcess.run("/usr/bin/pactl", ["unload-module", micModule], environment: TestInputs.environment) }
        return try await body(sink, mic)
    }

    @Test(.requires(.pulseServer, .builtBinary, RunCommandTests.clip))
    func `speech into the virtual microphone reaches the Gateway and the spoken reply comes out of the sink`() async throws {
        _ = try TestInput.pulseServer.path()
        try await Self.withDevices("talk") { sink, mic in try await Self.talkTurn(sink: sink, mic: mic) }
    }

    static func talkTurn(sink: String, mic: String) async throws {
        let gw = try await RunCommandTests.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let clip = try RunCommandTests.clip.path()
        // --no-barge-in mutes the microphone while the reply plays: the microphone hears all the sink plays.
        let run = try command.start([
            "run", "--gateway", gw.startup.url, "--token", RunCommandTests.token, "--source", mic, "--sink", sink,
            "--no-barge-in", "--json", "--grammar", RunCommandTests.pocketsphinxData + "/goforward.gram",
            "--max-turns", "1", "--seconds", "90",
        ])
        // The clip is played once the session listens (its capture is open by then).
        let deadline = ContinuousClock.now + .seconds(60)
        var listening = false
        while !listening, run.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            listening = RunCommandTests.events(run.stdoutSoFar).contains { $0["event"] == "state" && $0["to"] == "listening" }
        }
        try #require(listening, "the session never listened on \(mic): \(run.stderrSoFar)")

        let monitor = command.home + "/sink.wav"
        let recording = try command.start(["record", "--seconds", "20", "--output", monitor, "--source", sink + ".monitor"])
        #expect(await recording.waitForStderr("Recording 20.0 s from \(sink).monitor"), "record: \(recording.stderrSoFar)")
        let play = try await command.run(["play", clip, "--sink", sink])
        #expect(play.status == 0, "play: \(play.stderr)")

        let r = try await run.finish(timeout: .seconds(90))
        #expect(r.status == 0, "run stderr: \(r.stderr)")
        let transcripts = try await offPool { try gw.control("chat-transcripts") }["transcripts"]?.arrayValue ?? []
        #expect(transcripts.compactMap { $0["message"]?.stringValue } == [RunCommandTests.spoken], "\(transcripts)")
        let events = RunCommandTests.events(r.stdout)
        #expect(events.first { $0["event"] == "final" }?["text"]?.stringValue == RunCommandTests.spoken)
        #expect(events.first { $0["event"] == "speakingStopped" }?["completed"] == true, "\(events)")

        // On the sink's monitor: the clip, then (after the silence that ends the utterance) the spoken reply.
        let heard = try await recording.finish(timeout: .seconds(60))
        #expect(heard.status == 0, "record stderr: \(heard.stderr)")
        // PulseAudio's idle null sink sends nothing to its monitor, so the recording may begin a little into
        // the clip (AudioCommandLineTests): the search may place the clip up to 100 ms before it.
        let samples = [Int16](repeating: 0, count: 1600) + (try AudioFileReader.readMono(path: monitor).samples)
        let spoken = try AudioFileReader.readMono(path: clip).samples
        let match = SignalMatch.best(spoken, in: samples)
        // Where the recording had sound, and what `record` said (a capture interrupted or moved to another source
        // shows there): a miss then says whether the clip came late, went elsewhere or was never recorded.
        let loud = samples.indices.filter { samples[$0].magnitude > 1_000 }
        func seconds(_ sample: Int) -> String { String(format: "%.2f s", Double(sample - 1600) / 16_000) }
        let recorded = "\(seconds(samples.count)) recorded, sound above 1000 from \(seconds(loud.first ?? 1600)) to "
            + "\(seconds(loud.last ?? 1600)) (\(loud.count) samples); record said: \(heard.stderr)\(heard.stdout)"
        #expect(match.correlation > 0.8, "the clip is not on the sink's monitor: correlation \(match.correlation); \(recorded)")
        let afterClip = samples.dropFirst(match.offset + spoken.count + 8_000)
        let voiced = afterClip.indices.filter { afterClip[$0].magnitude > 1_000 }
        let reply = Double((voiced.last ?? 0) - (voiced.first ?? 0)) / 16_000
        #expect((0.8...8).contains(reply), "\(reply) s of reply on the sink after the clip, expected 'echo: \(RunCommandTests.spoken)'; \(recorded)")
    }
}
