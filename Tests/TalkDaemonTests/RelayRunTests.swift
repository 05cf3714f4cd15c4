import AudioIO
import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `run --stt auto|gateway|local` with the reference Gateway's transcription relay: the relay's words go out
/// when they come in time, the local words on every fault, and always exactly one `chat.send` per utterance.
/// Real time (the clip plays at its pace): this suite runs in `make test`'s second pass.
@Suite(.serialized) struct RelayRunTests {
    static let relayWords = "the relay heard this"

    static func gateway(_ extra: [String] = []) async throws -> ReferenceGatewayProcess {
        try await offPool {
            try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot,
                                        arguments: ["--token", RunCommandTests.token, "--auto-approve"] + extra)
        }
    }

    static func control(_ gw: ReferenceGatewayProcess, _ line: String) async throws -> JSONValue {
        try await offPool { try gw.control(line) }
    }

    /// Runs the clip (or `input`) through `run` and returns its events and the transcripts the Gateway accepted.
    static func run(_ gw: ReferenceGatewayProcess, _ extra: [String], input: String? = nil) async throws
        -> (events: [JSONValue], transcripts: [String], stderr: String, status: Int32)
    {
        let command = try BuiltCommand()
        defer { command.removeHome() }
        var arguments = try RunCommandTests.arguments(gw, output: command.home + "/out.wav", extra: extra)
        if let input, let at = arguments.firstIndex(of: "--input") { arguments[at + 1] = input }
        let r = try await command.run(arguments)
        let transcripts = try await control(gw, "chat-transcripts")["transcripts"]?.arrayValue ?? []
        return (RunCommandTests.events(r.stdout), transcripts.compactMap { $0["message"]?.stringValue }, r.stderr, r.status)
    }

    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let i)?: Double(i)
        case .double(let d)?: d
        default: nil
        }
    }

    static func sourceEvents(_ events: [JSONValue]) -> [JSONValue] { events.filter { $0["event"] == "transcriptSource" } }

    /// The clip as a WAV file, for the Gateway's correlation of what it decoded.
    static func referenceWAV() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("relay-run-goforward-\(getpid()).wav").path
        let pcm = try AudioFileReader.readMono(path: try RunCommandTests.clip.path())
        try WAVAudio(pcm).write(path: path)
        return path
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip), arguments: ["g711_ulaw/8000", "pcm16/24000", "opus/16000"])
    func `--stt auto sends the relay's words, and the relay decodes what was spoken`(uplink: String) async throws {
        let gw = try await Self.gateway(["--transcription-uplink", uplink])
        defer { gw.stop() }
        _ = try await Self.control(gw, #"{"cmd": "talk-relay", "texts": ["\#(Self.relayWords)"]}"#)
        let r = try await Self.run(gw, ["--max-turns", "1"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.transcripts == [Self.relayWords], "\(r.transcripts)")
        let source = Self.sourceEvents(r.events)
        #expect(source.count == 1 && source.first?["engine"] == "gateway-relay", "\(source)")
        #expect(Self.number(source.first?["relayMs"]) != nil)
        #expect(r.events.first { $0["event"] == "final" }?["engine"] == "gateway-relay")
        let encoding = String(uplink.prefix { $0 != "/" })
        let uplinkEvent = r.events.first { $0["event"] == "relayUplink" }
        #expect(uplinkEvent?["uplink"]?.stringValue?.hasPrefix(encoding) == true, "\(String(describing: uplinkEvent))")
        let reference = try Self.referenceWAV()
        let turns = try await Self.control(gw, JSONValue.object(["cmd": "relay-turns", "reference": .string(reference)]).jsonText)["turns"]?.arrayValue ?? []
        let spoken = try #require(turns.max { ($0["durationMs"]?.intValue ?? 0) < ($1["durationMs"]?.intValue ?? 0) })
        #expect(spoken["encoding"]?.stringValue == encoding)
        #expect((Self.number(spoken["correlation"]) ?? 0) >= 0.9, "what the Gateway decoded: \(spoken)")
        #expect((spoken["durationMs"]?.intValue ?? 0) >= 2_500, "the utterance with its pre-roll reached the relay: \(spoken)")
        let log = try await Self.control(gw, "relay-log")["log"]?.arrayValue ?? []
        #expect(log.filter { $0["kind"] == "created" }.count == 1 && log.contains { $0["kind"] == "closed" },
                "one relay session, closed at the end: \(log)")
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        #expect(try await Self.control(gw, "violations")["count"] == 0)
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `the audio after the local endpoint goes on to the relay until its final, as a provider ends a turn on silence it received`() async throws {
        // refgw's relay, as Deepgram's and OpenAI's endpointing, ends a turn only on silence it has received, never
        // because appends stopped. Its energy VAD hears this clip's quiet last syllable end 100-200 ms before the
        // endpointer does, so with its default 800 ms the 700 ms before the local endpoint could already do: 1200 ms
        // here makes a provider that needs more than the client has sent by its endpoint.
        let gw = try await Self.gateway()
        defer { gw.stop() }
        _ = try await Self.control(gw, #"{"cmd": "talk-relay", "texts": ["\#(Self.relayWords)"], "silenceMs": 1200}"#)
        let r = try await Self.run(gw, ["--max-turns", "1", "--stt", "gateway"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.transcripts == [Self.relayWords], "the relay's final came: \(r.transcripts)")
        let source = Self.sourceEvents(r.events)
        #expect(source.count == 1 && source.first?["engine"] == "gateway-relay", "\(source)")
        // End of speech to the final: most of the provider's 1200 ms (the VADs disagree by up to 200 ms), at most the
        // endpoint (700 ms) and the relay wait (1500 ms).
        let relayMs = try #require(Self.number(source.first?["relayMs"]), "\(source)")
        #expect((900...2_200).contains(relayMs), "end of speech to the relay's final: \(relayMs) ms")
        let turns = try await Self.control(gw, "relay-turns")["turns"]?.arrayValue ?? []
        #expect(turns.contains { $0["text"]?.stringValue == Self.relayWords }, "\(turns)")
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        #expect(try await Self.control(gw, "violations")["count"] == 0)
    }

    /// Faults of the relay, each ending in the local words, sent once.
    static let faults: [(name: String, command: String)] = [
        ("not ready", #"{"cmd": "talk-relay", "ready": false}"#),
        ("slow final", #"{"cmd": "talk-relay", "texts": ["too late"], "finalDelayMs": 3000}"#),
        ("error mid-utterance", #"{"cmd": "talk-relay", "texts": ["never"], "errorAfterAppends": 8}"#),
        ("session expired mid-utterance", #"{"cmd": "talk-relay", "texts": ["never"], "ttlMs": 1500}"#),
        ("no words", #"{"cmd": "talk-relay", "text": ""}"#),
    ]

    @Test(.requires(.builtBinary, RunCommandTests.clip), arguments: faults.map(\.name))
    func `--stt auto falls back to the local words, exactly once`(fault: String) async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        _ = try await Self.control(gw, try #require(Self.faults.first { $0.name == fault }).command)
        // Long enough for a slow final to arrive after the local words went out: it must not go too.
        let r = try await Self.run(gw, ["--seconds", "10"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.transcripts == [RunCommandTests.spoken], "\(fault): \(r.transcripts)")
        let source = Self.sourceEvents(r.events)
        #expect(source.count == 1 && source.first?["engine"] == "pocketsphinx", "\(fault): \(source)")
        #expect(source.first?["fallbackReason"]?.stringValue?.isEmpty == false)
        if fault == "no words" {   // only empty finals: the local words go at once, not after the wait
            #expect(source.first?["fallbackReason"] == "the relay heard no words", "\(source)")
        }
        if fault == "slow final" { #expect(r.stderr.contains("a late relay final was dropped"), "the late final never came: \(r.stderr)") }
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        #expect(try await Self.control(gw, "violations")["count"] == 0)
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `--stt local never opens a relay session; --stt gateway needs one`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        _ = try await Self.control(gw, #"{"cmd": "talk-relay", "texts": ["unused"]}"#)
        let r = try await Self.run(gw, ["--max-turns", "1", "--stt", "local"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.transcripts == [RunCommandTests.spoken])
        #expect(Self.sourceEvents(r.events).isEmpty)
        let log = try await Self.control(gw, "relay-log")["log"]?.arrayValue ?? []
        #expect(!log.contains { $0["kind"] == "created" }, "\(log)")

        let legacy = try await Self.gateway(["--talk-era", "legacy"])
        defer { legacy.stop() }
        let refused = try await Self.run(legacy, ["--max-turns", "1", "--stt", "gateway"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("offers no transcription relay"), "\(refused.stderr)")
        #expect(refused.transcripts.isEmpty)
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `--mode realtime: the relay hears the clip and its spoken answer lands in the output track`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        // The rest of the answer comes 400 ms after its first 100 ms chunk, as a loaded machine or a slow network has
        // it: still one answer, one turn (`--max-turns 1`), played whole.
        _ = try await Self.control(gw, #"{"cmd": "talk-relay", "texts": ["go forward ten meters"], "audioPace": 0.5, "audioGapMs": 400}"#)
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let output = command.home + "/out.wav"
        let r = try await command.run(["run", "--mode", "realtime", "--gateway", gw.startup.url, "--token", RunCommandTests.token,
                                       "--input", try RunCommandTests.clip.path(), "--output", output, "--json", "--max-turns", "1"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let events = RunCommandTests.events(r.stdout)
        #expect(events.first { $0["event"] == "final" }?["engine"] == "gateway-realtime")
        // The answer played to its end and its turn ended once, after it (no mark ends it: a relay that acknowledges
        // the provider's marks itself sends none).
        let stopped = events.filter { $0["event"] == "speakingStopped" }
        #expect(stopped.count == 1 && stopped.first?["completed"] == true, "\(stopped)")
        let ended = events.filter { $0["event"] == "turnEnded" }
        #expect(ended.count == 1 && ended.first?["reason"] == "reply done", "\(ended)")
        #expect(events.contains { $0["event"] == "relayUplink" && $0["uplink"] == "pcm16 24 kHz" })
        #expect(try await Self.control(gw, "chat-transcripts")["transcripts"]?.arrayValue?.isEmpty == true, "realtime sends no chat.send")
        let log = try await Self.control(gw, "relay-log")["log"]?.arrayValue ?? []
        #expect(log.contains { $0["kind"] == "closed" && $0["mode"] == "realtime" }, "the relay session was not closed: \(log)")
        // The marks behind the audio heard before the end were acknowledged (the last ones may go with the session).
        #expect(log.contains { $0["kind"] == "mark-ack" && $0["outstanding"] == true }, "no mark acknowledged: \(log)")
        let track = try WAVAudio.read(path: output)
        let voiced = track.samples.indices.filter { abs(track.samples[$0]) > 0.02 }
        let length = Double((voiced.last ?? 0) - (voiced.first ?? 0)) / Double(track.sampleRate)
        #expect((1.0...6).contains(length), "\(length) s of the relay's answer in the track")
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        #expect(try await Self.control(gw, "violations")["count"] == 0)
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `a late final of one utterance is dropped and the next utterance gets its own words`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        _ = try await Self.control(gw, #"{"cmd": "talk-relay", "texts": ["first words", "second words"], "finalDelaysMs": [3500, 0]}"#)
        // One second apart: the first utterance's final, 3.5 s late, comes after the 2.5 s wait for it, while the
        // second is in flight. (With 2.5 s and the default 1.5 s wait, the second's prompt final once missed the
        // wait too on a loaded CI machine: both utterances went out with the local words.)
        let clip = try AudioFileReader.readMono(path: try RunCommandTests.clip.path())
        let twice = PCMBuffer(sampleRate: clip.sampleRate, samples: clip.samples + [Int16](repeating: 0, count: clip.sampleRate) + clip.samples)
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("relay-run-twice-\(getpid()).wav").path
        try WAVAudio(twice).write(path: input)
        defer { try? FileManager.default.removeItem(atPath: input) }
        let r = try await Self.run(gw, ["--seconds", "16", "--relay-wait-ms", "2500"], input: input)
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.transcripts == [RunCommandTests.spoken, "second words"], "\(r.transcripts)")
        #expect(r.stderr.contains("a late relay final was dropped"))
        let engines = Self.sourceEvents(r.events).compactMap { $0["engine"]?.stringValue }
        #expect(engines == ["pocketsphinx", "gateway-relay"])
        let log = try await Self.control(gw, "relay-log")["log"]?.arrayValue ?? []
        #expect(log.filter { $0["kind"] == "created" }.count == 1, "one relay session for both utterances: \(log)")
    }
}
