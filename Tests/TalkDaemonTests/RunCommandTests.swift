import AudioIO
import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `openclaw-talk run` as a user runs it, with files as the microphone and the speaker and the reference
/// Gateway's scripted agent answering: the whole turn, timed through the two files. Recognition is CPU-heavy:
/// this suite runs in `make test`'s second pass.
@Suite(.serialized) struct RunCommandTests {
    static let token = "run-test-token"
    static let pocketsphinxData = "/usr/share/pocketsphinx/test/data"
    static let clip = TestInput(name: "goforward.raw (pocketsphinx test data)", remedy: "apt-get install pocketsphinx-en-us") {
        FileManager.default.fileExists(atPath: pocketsphinxData + "/goforward.raw") ? pocketsphinxData + "/goforward.raw" : nil
    }
    /// "go forward ten meters", as the clip says it.
    static let spoken = "go forward ten meters"

    static func gateway() async throws -> ReferenceGatewayProcess {
        try await offPool {
            try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot, arguments: ["--token", Self.token, "--auto-approve"])
        }
    }

    static func arguments(_ gateway: ReferenceGatewayProcess, output: String, extra: [String] = []) throws -> [String] {
        ["run", "--gateway", gateway.startup.url, "--token", token, "--input", try clip.path(), "--output", output, "--json",
         "--grammar", pocketsphinxData + "/goforward.gram"] + extra
    }

    static func events(_ stdout: String) -> [JSONValue] {
        stdout.split(separator: "\n").compactMap { JSONValue.parse(Array($0.utf8)) }
    }

    @Test(.requires(.builtBinary, clip))
    func `a spoken clip reaches the Gateway once and the reply is voiced in the output track after it`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let output = command.home + "/out.wav"
        let r = try await command.run(try Self.arguments(gw, output: output, extra: ["--max-turns", "1"]))
        #expect(r.status == 0, "stderr: \(r.stderr)")

        let transcripts = try await offPool { try gw.control("chat-transcripts") }["transcripts"]?.arrayValue ?? []
        #expect(transcripts.count == 1, "\(transcripts)")
        #expect(transcripts.first?["message"]?.stringValue == Self.spoken)
        #expect(transcripts.first?["sends"]?.intValue == 1)

        let events = Self.events(r.stdout)
        let names = events.compactMap { $0["event"]?.stringValue }
        let expected = ["speechStarted", "final", "transcriptSent", "transcriptAcknowledged", "replyFinal", "speakingStarted", "speakingStopped"]
        let positions = expected.map { names.firstIndex(of: $0) ?? -1 }
        #expect(!positions.contains(-1) && positions == positions.sorted(), "events out of order: \(names)")
        let times = events.compactMap { $0["monotonicMs"]?.intValue }
        #expect(times.count == events.count && times == times.sorted(), "monotonicMs must not go back")
        #expect(events.first { $0["event"] == "final" }?["text"]?.stringValue == Self.spoken)
        // refgw's talk.config says silenceTimeoutMs 900: the endpointer closed after that much silence.
        let ended = events.first { $0["event"] == "speechEnded" }
        #expect(ended.map { ($0["closedAtMs"]?.intValue ?? 0) - ($0["lastSpeechEndMs"]?.intValue ?? 0) } == 900)
        #expect(events.first { $0["event"] == "speakingStopped" }?["completed"] == true)
        let states = events.filter { $0["event"] == "state" }.compactMap { $0["to"]?.stringValue }
        #expect(states == ["listening", "thinking", "speaking", "listening", "idle"])

        // The reply is in the track where the events put it: after the clip's end, as long as speech of it.
        let track = try WAVAudio.read(path: output)
        let voiced = track.samples.indices.filter { abs(track.samples[$0]) > 0.02 }
        let onset = Double(try #require(voiced.first)) / Double(track.sampleRate)
        let length = Double(voiced.last! - voiced.first!) / Double(track.sampleRate)
        let clipSeconds = Double(try FileManager.default.attributesOfItem(atPath: try Self.clip.path())[.size] as? Int ?? 0) / 32_000
        #expect(onset > clipSeconds, "reply audio at \(onset) s, before the clip ended at \(clipSeconds) s")
        let startedMs = try #require(events.first { $0["event"] == "speakingStarted" }?["monotonicMs"]?.intValue)
        #expect(abs(onset * 1000 - Double(startedMs)) < 500, "voiced at \(onset) s in the track, speakingStarted at \(startedMs) ms")
        #expect((0.8...8).contains(length), "\(length) s of reply audio for 'echo: \(Self.spoken)'")

        let modes = try await offPool { try gw.control("talk-modes") }["modes"]?.arrayValue ?? []
        let phases = modes.compactMap { $0["phase"]?.stringValue }
        #expect(phases.contains("thinking") && phases.contains("speaking"), "\(modes)")
        #expect(modes.last?["enabled"] == false, "talk.mode disabled must come last: \(modes)")
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        let violations = try await offPool { try gw.control("violations") }
        #expect(violations["count"] == 0, "schema violations: \(violations)")
    }

    @Test(.requires(.builtBinary, clip))
    func `SIGTERM while the reply plays ends the session cleanly and the track stops there`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let long = "This reply goes on for a long time. " + String(repeating: "It has many sentences to say. ", count: 12)
        _ = try #require(try await offPool { try gw.control(#"{"cmd": "chat-script", "reply": "\#(long)"}"#) }["ok"] == true)
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let output = command.home + "/out.wav"
        let running = try command.start(try Self.arguments(gw, output: output))
        let deadline = ContinuousClock.now + .seconds(90)
        while !running.stdoutSoFar.contains(#""event":"speakingStarted""#), running.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try #require(running.stdoutSoFar.contains(#""event":"speakingStarted""#), "never spoke: \(running.stderrSoFar)")
        running.process.terminate()
        let r = try await running.finish(timeout: .seconds(30))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let events = Self.events(r.stdout)
        #expect(events.contains { $0["event"] == "speakingStopped" && $0["completed"] == false }, "the reply was not cut")
        #expect(events.last?["event"] == "state" && events.last?["to"] == "idle")
        let modes = try await offPool { try gw.control("talk-modes") }["modes"]?.arrayValue ?? []
        #expect(modes.last?["enabled"] == false, "talk.mode disabled must be sent: \(modes)")
        let track = try WAVAudio.read(path: output)
        let seconds = Double(track.samples.count) / Double(track.sampleRate)
        let lastMs = Double(events.last?["monotonicMs"]?.intValue ?? 0)
        #expect(abs(seconds * 1000 - lastMs) < 1000, "the track (\(seconds) s) should end where the session did (\(lastMs) ms)")
    }

    @Test(.requires(.builtBinary, clip))
    func `a second utterance while the reply plays cuts it off and the next chat.send carries the offset`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let long = "Here is a long answer about the weather. " + String(repeating: "The sky stays blue all day. ", count: 10)
        _ = try #require(try await offPool { try gw.control(#"{"cmd": "chat-script", "reply": "\#(long)"}"#) }["ok"] == true)
        let command = try BuiltCommand()
        defer { command.removeHome() }
        // The clip, silence until 7 s (the reply is playing by then), the clip again.
        let clip = try AudioFileReader.readMono(path: try Self.clip.path()).samples
        let second = 7 * 16_000
        var samples = clip + [Int16](repeating: 0, count: second - clip.count) + clip
        samples += [Int16](repeating: 0, count: 16_000)
        let input = command.home + "/twice.wav"
        try WAVAudio(sampleRate: 16_000, channels: 1, samples: samples.map { Float($0) / 32_768 }).encoded()
            .write(to: URL(fileURLWithPath: input))
        let output = command.home + "/out.wav"
        var arguments = try Self.arguments(gw, output: output, extra: ["--max-turns", "2", "--seconds", "60", "--silence-ms", "600"])
        arguments[arguments.firstIndex(of: "--input")! + 1] = input
        let r = try await command.run(arguments)
        #expect(r.status == 0, "stderr: \(r.stderr)")

        let events = Self.events(r.stdout)
        // --silence-ms beats talk.config's 900.
        let gaps = events.filter { $0["event"] == "speechEnded" }.map { ($0["closedAtMs"]?.intValue ?? 0) - ($0["lastSpeechEndMs"]?.intValue ?? 0) }
        #expect(!gaps.isEmpty && gaps.allSatisfy { $0 == 600 }, "\(gaps)")
        let bargeIn = try #require(events.first { $0["event"] == "bargeIn" }, "no barge-in: \(events.compactMap { $0["event"]?.stringValue })")
        let offset = try #require(bargeIn["offsetSeconds"].flatMap { if case .double(let d) = $0 { d } else { $0.intValue.map(Double.init) } })
        let bargeInMs = Int(try #require(bargeIn["monotonicMs"]?.intValue))
        #expect(bargeInMs > second / 16, "barge-in at \(bargeInMs) ms, before the second utterance began")
        let transcripts = try await offPool { try gw.control("chat-transcripts") }["transcripts"]?.arrayValue ?? []
        let messages = transcripts.compactMap { $0["message"]?.stringValue }
        #expect(messages.count == 2, "\(messages)")
        // The prefix carries the offset in tenths; the event's offset has more digits, so a value on a rounding
        // edge (4.749… sent as 4.7, reported as 4.75) may differ in its last tenth.
        let nearest = [offset - 0.05, offset, offset + 0.05].map {
            InterruptionPrefix.message(transcript: Self.spoken, interruptedAtSeconds: $0)
        }
        let ignored = events.filter { $0["event"] == "transcriptIgnored" }
        #expect(messages.last.map(nearest.contains) == true, "\(messages) for an offset of \(offset) s; ignored: \(ignored)")
        #expect(offset > 0.5, "the reply had played \(offset) s when it was cut")

        // Playback went silent at the barge-in: nothing of the first reply after it, and the second reply only
        // after the second utterance ended.
        let track = try WAVAudio.read(path: output)
        let from = (bargeInMs + 200) * track.sampleRate / 1000
        let to = min(track.samples.count, (bargeInMs + 1000) * track.sampleRate / 1000)
        #expect(from < to && track.samples[from..<to].allSatisfy { abs($0) < 0.02 }, "the reply went on after the barge-in")
    }
}
