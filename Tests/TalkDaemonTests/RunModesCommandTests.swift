import AudioIO
import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `openclaw-talk run`'s hands-free modes and Gateway hooks through the built binary, the reference Gateway and
/// files as devices: wake phrases, push-to-talk from an operator's `node.invoke`, the idle timeout, `chat.abort`
/// on barge-in, and the reply's voice in `talk.speak`. CPU-heavy like RunCommandTests: `make test`'s second pass.
@Suite(.serialized) struct RunModesCommandTests {
    static let tools: [TestInput] = [.program("espeak-ng", package: "espeak-ng"), .program("sox", package: "sox")]

    /// The pocketsphinx test sentence, optionally after a spoken wake word, in a grammar that knows both.
    static let grammar = """
        #JSGF V1.0;
        grammar wake;
        public <utterance> = <wake> | [<wake>] go <direction> <distance> [meter | meters];
        <wake> = computer | robot;
        <direction> = forward | backward;
        <distance> = one | two | three | four | five | six | seven | eight | nine | ten;

        """

    static func silence(_ seconds: Double) -> [Int16] { [Int16](repeating: 0, count: Int(seconds * 16_000)) }

    static func goForward() throws -> [Int16] { try AudioFileReader.readMono(path: try RunCommandTests.clip.path()).samples }

    /// A word in espeak-ng's Klatt voice (the synthetic speech PocketSphinx hears best), 16 kHz, its silences trimmed.
    static func word(_ text: String, in folder: String) async throws -> [Int16] {
        let wav = folder + "/espeak.wav"
        let raw = folder + "/word.raw"
        try await tool("/usr/bin/espeak-ng", ["-v", "en-us+klatt", "-s", "150", "-w", wav, text])
        try await tool("/usr/bin/sox", [wav, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed", "-t", "raw", raw,
                                  "silence", "1", "0.01", "1%", "reverse", "silence", "1", "0.01", "1%", "reverse"])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    static func tool(_ path: String, _ arguments: [String]) async throws {
        let (status, _) = try await ChildProcess.output(path, arguments)
        try #require(status == 0, "\(path) \(arguments) failed")
    }

    /// Writes the input track and the grammar into the command's home; returns `run`'s arguments with them.
    static func arguments(_ gw: ReferenceGatewayProcess, _ command: BuiltCommand, input samples: [Int16], extra: [String]) throws -> [String] {
        let input = command.home + "/input.wav"
        try WAVAudio(sampleRate: 16_000, channels: 1, samples: samples.map { Float($0) / 32_768 }).encoded()
            .write(to: URL(fileURLWithPath: input))
        let grammar = command.home + "/wake.gram"
        try Self.grammar.write(toFile: grammar, atomically: true, encoding: .utf8)
        // The local recogniser's words only: with ../shared the reference Gateway's relay names the corpus clip
        // an utterance's loudness envelope matches, and once (under load, in CI) it took the synthetic "robot"
        // for the digit clip "three", so the wake phrase was never heard. RelayRunTests covers the relay.
        return ["run", "--gateway", gw.startup.url, "--token", RunCommandTests.token, "--input", input,
                "--output", command.home + "/out.wav", "--json", "--grammar", grammar, "--stt", "local"] + extra
    }

    static func control(_ gw: ReferenceGatewayProcess, _ object: [String: Any]) async throws -> JSONValue {
        let line = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        let reply = try await offPool { try gw.control(line) }
        try #require(reply["ok"] == true, "refgw refused \(line): \(reply)")
        return reply
    }

    static func transcripts(_ gw: ReferenceGatewayProcess) async throws -> [JSONValue] {
        try await offPool { try gw.control("chat-transcripts") }["transcripts"]?.arrayValue ?? []
    }

    static func names(_ events: [JSONValue]) -> [String] { events.compactMap { $0["event"]?.stringValue } }

    @Test(.requires(.builtBinary, RunCommandTests.clip), .requires(tools[0], tools[1]))
    func `wake mode ignores speech without one of the Gateway's wake phrases and sends what follows one`() async throws {
        let gw = try await RunCommandTests.gateway()
        defer { gw.stop() }
        // The Gateway's list now holds only "robot": "computer" (one of its defaults) no longer wakes.
        _ = try await Self.control(gw, ["cmd": "voicewake-set", "triggers": ["robot"]])
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let pause = Self.silence(0.3)
        let said = try Self.goForward()
        let input = try await Self.word("computer", in: command.home) + pause + said + Self.silence(2.5)
            + (try await Self.word("robot", in: command.home)) + pause + said + Self.silence(1.5)
        let r = try await command.run(try Self.arguments(gw, command, input: input, extra: ["--wake", "--max-turns", "1", "--seconds", "60"]))
        #expect(r.status == 0, "stderr: \(r.stderr)")

        let messages = try await Self.transcripts(gw).compactMap { $0["message"]?.stringValue }
        let events = RunCommandTests.events(r.stdout)
        // What was heard, for a failure's message: this test has failed under load in CI with nothing sent.
        let heard = events.filter { ["speechStarted", "speechEnded", "final", "transcriptIgnored", "wakePhrase", "error"]
            .contains($0["event"]?.stringValue ?? "") }.map(\.jsonText)
        #expect(messages == [RunCommandTests.spoken], "only what followed the wake phrase goes out, once; heard: \(heard)")
        #expect(events.first { $0["event"] == "mode" }?["to"] == "wake")
        let ignored = try #require(events.firstIndex { $0["event"] == "transcriptIgnored" && $0["reason"] == "no wake phrase" },
                                   "the speech without the phrase was not reported: \(Self.names(events))")
        #expect(events[ignored]["text"]?.stringValue == "computer " + RunCommandTests.spoken)
        let woke = try #require(events.firstIndex { $0["event"] == "wakePhrase" }, "heard: \(heard)")
        #expect(events[woke]["phrase"] == "robot" && events[woke]["command"]?.stringValue == RunCommandTests.spoken)
        let sent = try #require(events.firstIndex { $0["event"] == "transcriptSent" })
        #expect(ignored < woke && woke < sent)
        let states = events.filter { $0["event"] == "state" }.compactMap { $0["to"]?.stringValue }
        #expect(states == ["waiting", "thinking", "speaking", "waiting", "idle"])
        // talk.mode: idle while waiting for the phrase, then the turn's phases.
        let phases = try await offPool { try gw.control("talk-modes") }["modes"]?.arrayValue?.compactMap { $0["phase"]?.stringValue } ?? []
        #expect(phases.first == "idle" && phases.contains("thinking") && phases.contains("speaking"), "\(phases)")
        // Counted only when refgw checked the frames against the schema (without it: skipped, a failure under CI).
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        let violations = try await offPool { try gw.control("violations") }
        #expect(violations["count"] == 0, "schema violations: \(violations)")
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip), .requires(tools[0], tools[1]))
    func `after the idle timeout always-listening needs a wake phrase, which brings it back`() async throws {
        let gw = try await RunCommandTests.gateway()
        defer { gw.stop() }
        _ = try await Self.control(gw, ["cmd": "voicewake-set", "triggers": ["robot"]])
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let said = try Self.goForward()
        // 4 s of nothing (the 2 s timeout runs out), speech that is ignored, the wake word alone, then speech again.
        let input = Self.silence(4) + said + Self.silence(1.5) + (try await Self.word("robot", in: command.home)) + Self.silence(1.2)
            + said + Self.silence(1.5)
        let r = try await command.run(try Self.arguments(gw, command, input: input, extra: ["--idle-timeout", "2", "--max-turns", "1", "--seconds", "60"]))
        #expect(r.status == 0, "stderr: \(r.stderr)")

        let events = RunCommandTests.events(r.stdout)
        let modes = events.filter { $0["event"] == "mode" }.map { "\($0["from"]?.stringValue ?? "-")>\($0["to"]?.stringValue ?? "?")" }
        #expect(modes == ["->always", "always>wake", "wake>always"], "\(modes)")
        let fellBack = try #require(events.first { $0["event"] == "mode" && $0["to"] == "wake" })
        let fellBackMs = try #require(fellBack["monotonicMs"]?.intValue)
        #expect((1900...3500).contains(fellBackMs), "fell back at \(fellBackMs) ms for a 2 s timeout")
        #expect(events.contains { $0["event"] == "transcriptIgnored" && $0["reason"] == "no wake phrase" })
        let messages = try await Self.transcripts(gw).compactMap { $0["message"]?.stringValue }
        #expect(messages == [RunCommandTests.spoken], "only the speech after the wake phrase goes out")
    }

    /// Invokes a push-to-talk command on the session's node as an operator would (`node.invoke` through refgw).
    static func invoke(_ gw: ReferenceGatewayProcess, _ ptt: String) async throws -> JSONValue {
        let reply = try await Self.control(gw, ["cmd": "node-invoke", "command": ptt, "timeoutMs": 30_000])
        let result = try #require(reply["result"], "\(reply)")
        try #require(result["ok"] == true, "\(ptt) failed: \(result)")
        return try #require(result["payloadJSON"]?.stringValue.flatMap { JSONValue.parse(Array($0.utf8)) }, "\(result)")
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `push-to-talk from an operator's node.invoke sends only what was said between start and stop`() async throws {
        let gw = try await RunCommandTests.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let said = try Self.goForward()
        // Speech before start (never heard: the microphone is held), then speech inside the capture.
        let input = said + Self.silence(7) + said + Self.silence(3)
        let running = try command.start(try Self.arguments(gw, command, input: input, extra: ["--ptt", "--max-turns", "1", "--seconds", "60"]))
        let deadline = ContinuousClock.now + .seconds(60)
        while !running.stdoutSoFar.contains(#""event":"mode""#), running.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let sessionStart = ContinuousClock.now
        try #require(running.stdoutSoFar.contains(#""event":"mode""#), "never started: \(running.stderrSoFar)")
        // After the first sentence (0-2.6 s), before the second (9.6 s on).
        try await Task.sleep(until: sessionStart + .seconds(4))
        let started = try await Self.invoke(gw, "talk.ptt.start")
        let captureId = try #require(started["captureId"]?.stringValue)
        while !running.stdoutSoFar.contains(#""event":"final""#), running.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let stopped = try await Self.invoke(gw, "talk.ptt.stop")
        #expect(stopped["captureId"]?.stringValue == captureId)
        #expect(stopped["status"] == "queued" && stopped["transcript"]?.stringValue == RunCommandTests.spoken, "\(stopped)")
        let r = try await running.finish(timeout: .seconds(60))
        #expect(r.status == 0, "stderr: \(r.stderr)")

        let messages = try await Self.transcripts(gw).compactMap { $0["message"]?.stringValue }
        #expect(messages == [RunCommandTests.spoken])
        let events = RunCommandTests.events(r.stdout)
        let names = Self.names(events)
        let start = try #require(events.firstIndex { $0["event"] == "pushToTalk" && $0["command"] == "start" })
        #expect(names.filter { $0 == "final" }.count == 1, "the sentence before start must not be heard: \(names)")
        #expect(names.firstIndex(of: "speechStarted").map { $0 > start } == true, "speech heard before talk.ptt.start: \(names)")
        let states = events.filter { $0["event"] == "state" }.compactMap { $0["to"]?.stringValue }
        #expect(states == ["waiting", "listening", "thinking", "speaking", "waiting", "idle"])
        // With no directive, talk.speak asks for talk.config's voice.
        let speaks = try await offPool { try gw.control("speak-log") }["speaks"]?.arrayValue ?? []
        #expect(!speaks.isEmpty && speaks.allSatisfy { $0["params"]?["voiceId"] == "refgw-voice" }, "\(speaks)")
        // Counted only when refgw checked the frames against the schema (without it: skipped, a failure under CI).
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        let violations = try await offPool { try gw.control("violations") }
        #expect(violations["count"] == 0, "schema violations: \(violations)")
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `talk.ptt.once through node.invoke answers with what the next utterance said, and sends it`() async throws {
        let gw = try await RunCommandTests.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        // The invoke goes out as soon as the daemon opens its devices (the `echoCancellation` event) and its node is
        // connected, before the loop runs: it must wait for the loop and be answered, not be lost (the operator's
        // invoke then timed out after 30 s: a request the node had not subscribed for yet). The 6 s of silence first
        // leave the loop time to start and take the request before the utterance begins. (Before the devices open,
        // the node seen may still be `--gateway`'s pairing connection, which closes.)
        let input = Self.silence(6) + (try Self.goForward()) + Self.silence(3)
        let running = try command.start(try Self.arguments(gw, command, input: input, extra: ["--ptt", "--max-turns", "1", "--seconds", "60"]))
        let deadline = ContinuousClock.now + .seconds(60)
        while !running.stdoutSoFar.contains(#""event":"echoCancellation""#), running.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        try #require(running.stdoutSoFar.contains(#""event":"echoCancellation""#), "never opened its devices: \(running.stderrSoFar)")
        while try await gw.authenticatedNode() == nil, running.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        try #require(try await gw.authenticatedNode() != nil, "the node never connected: \(running.stderrSoFar)")
        // Answered once the utterance has closed: the node serves it while the capture listens.
        let once = try await Self.invoke(gw, "talk.ptt.once")
        #expect(once["status"] == "queued" && once["transcript"]?.stringValue == RunCommandTests.spoken, "\(once)")
        let r = try await running.finish(timeout: .seconds(60))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let messages = try await Self.transcripts(gw).compactMap { $0["message"]?.stringValue }
        #expect(messages == [RunCommandTests.spoken])
        let events = RunCommandTests.events(r.stdout)
        #expect(events.contains { $0["event"] == "pushToTalk" && $0["command"] == "once" && $0["status"] == "queued" })
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `a barge-in aborts the agent's run with chat.abort`() async throws {
        let gw = try await RunCommandTests.gateway()
        defer { gw.stop() }
        // A reply still being written when the user cuts in: 70 deltas 150 ms apart.
        let long = "Here is a long answer about the weather. " + String(repeating: "The sky stays blue all day. ", count: 24)
        _ = try await Self.control(gw, ["cmd": "chat-script", "reply": long, "chunkChars": 10, "maxDeltas": 200, "delayMs": 150])
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let said = try Self.goForward()
        let input = said + Self.silence(7 - Double(said.count) / 16_000) + said + Self.silence(1)
        let r = try await command.run(try Self.arguments(gw, command, input: input, extra: ["--seconds", "16", "--silence-ms", "600"]))
        #expect(r.status == 0, "stderr: \(r.stderr)")

        let events = RunCommandTests.events(r.stdout)
        try #require(events.contains { $0["event"] == "bargeIn" }, "no barge-in: \(Self.names(events))")
        let transcripts = try await Self.transcripts(gw)
        #expect(transcripts.count == 2, "\(transcripts)")
        #expect(transcripts.first?["status"] == "aborted", "the cut reply's run was not aborted: \(transcripts.first.map { "\($0)" } ?? "")")
        let frames = try await offPool { try gw.control("frames") }["frames"]?.arrayValue ?? []
        let aborts = frames.compactMap { $0["frame"] }.filter { $0["method"] == "chat.abort" }
        #expect(aborts.count == 1, "chat.abort requests: \(aborts)")
        #expect(aborts.first?["params"]?["runId"] == transcripts.first?["runId"])
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `a reply's voice directive reaches talk.speak's params`() async throws {
        let gw = try await RunCommandTests.gateway()
        defer { gw.stop() }
        let reply = #"{"voice":"Rachel","model":"eleven_turbo_v2","rate":200,"once":true}"# + "\nGoing forward now."
        _ = try await Self.control(gw, ["cmd": "chat-script", "reply": reply])
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let r = try await command.run(try Self.arguments(gw, command, input: try Self.goForward() + Self.silence(1), extra: ["--max-turns", "1", "--seconds", "60"]))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let speaks = try await offPool { try gw.control("speak-log") }["speaks"]?.arrayValue ?? []
        let params = try #require(speaks.first?["params"], "talk.speak was not asked: \(r.stderr)")
        #expect(speaks.first?["method"] == "talk.speak")
        #expect(params["text"]?.stringValue == "Going forward now.")
        #expect(params["voiceId"] == "Rachel" && params["modelId"] == "eleven_turbo_v2" && params["rateWpm"]?.intValue == 200, "\(params)")
        let events = RunCommandTests.events(r.stdout)
        #expect(events.contains { $0["event"] == "speakingStarted" && $0["voice"] == "gateway" })
        // Counted only when refgw checked the frames against the schema (without it: skipped, a failure under CI).
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        let violations = try await offPool { try gw.control("violations") }
        #expect(violations["count"] == 0, "schema violations: \(violations)")
    }
}
