import AudioIO
import Foundation
import SpeechRecognition
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `openclaw-talk run --source vmic --sink vsink` on a headless PulseAudio of the test's own: the user's clip is
/// played into the null sink and heard on its monitor, the virtual microphone, and so is the daemon's reply, as
/// a loudspeaker's sound reaches a laptop's microphone. With echo cancellation on, a user speaking over the
/// reply must cut it off, with their words; the reply's own echo must not (`RunSelfEchoLoopbackTests`). Both
/// run in `make test`, in a pass of their own: the live timing they depend on needs the machine to itself.
@Suite(.serialized) struct RunLoopbackTests {
    typealias Events = [JSONValue]

    /// Words the clip ("go forward ten meters") does not hold, so the text guard cannot tell the reply's echo
    /// from the user: only echo cancellation (and the energy guard) keep the reply from cutting itself off.
    static let reply = "Sure, I can help with that. The weather today is mild and clear, with a light breeze. "
        + "Take a coat when you leave the house tonight."
    static let longReply = "Here is a long answer about the weather. " + String(repeating: "The sky stays blue all day. ", count: 10)

    /// About 25 s in the local voice (73 words, 8 sentences), in words the clip does not hold: what the bench's
    /// `--reply-seconds 25` plays.
    static let localVoiceReply = "Sure, here is what I found about that. The forecast stays mild and clear all week, with a light breeze. "
        + "Mornings begin cool, and by noon the sun warms the valley. Rain is unlikely before Sunday evening. "
        + "Should clouds gather, they will thin out by the afternoon. Pack a light jacket for the evenings by the lake. "
        + "The pollen count remains moderate, so allergies may flare. Humidity hovers around half, which feels pleasant."
    static let localVoiceSentences = 8

    /// `talk.config` without a provider: the reply is spoken in the local voice, as from a Gateway with no Talk
    /// provider configured.
    static func useLocalVoice(_ gw: ReferenceGatewayProcess) async throws {
        let config = #"{"cmd": "talk-config", "config": {"talk": {"interruptOnSpeech": true, "silenceTimeoutMs": 900}, "session": {"mainKey": "main"}}}"#
        _ = try await offPool { try gw.control(config) }
    }

    static func clip() throws -> [Int16] { try AudioFileReader.readMono(path: try RunCommandTests.clip.path()).samples }

    /// A session against `pulse` and `gw`, started and listening; `arguments` are added to run's.
    static func startSession(
        _ pulse: PrivatePulse, _ gw: ReferenceGatewayProcess, command: BuiltCommand, aec: String, grammar: Bool = true, arguments: [String] = []
    ) async throws -> BuiltCommand.Running {
        let running = try command.start([
            "run", "--gateway", gw.startup.url, "--token", RunCommandTests.token, "--source", "vmic", "--sink", "vsink",
            "--aec", aec, "--json", "--seconds", "150",
        ] + (grammar ? ["--grammar", RunCommandTests.pocketsphinxData + "/goforward.gram"] : []) + arguments)
        try #require(await waitFor(running, #""to":"listening""#), "never listened: \(running.stderrSoFar)")
        // The endpointer's noise floor settles on the (silent) microphone first.
        try await Task.sleep(for: .seconds(1))
        return running
    }

    /// Waits (bounded) until stdout holds `text` `count` times.
    static func waitFor(_ running: BuiltCommand.Running, _ text: String, count: Int = 1, upTo timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, running.process.isRunning {
            if running.stdoutSoFar.components(separatedBy: text).count - 1 >= count { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return running.stdoutSoFar.components(separatedBy: text).count - 1 >= count
    }

    /// The user's clip played once to ask, and again 1.5 s into the reply (both mixed in the sink and heard on the
    /// microphone, as a user speaking over a loudspeaker is); then, once stdout holds `turnEnd` twice (the second
    /// turn's end) or a minute has passed, a second for what follows, and the session stopped. Whether the reply
    /// started and the second turn ended, when the user's speech began over the reply, and the session's outcome.
    static func speakOverReply(_ pulse: PrivatePulse, _ running: BuiltCommand.Running, turnEnd: String) async throws
        -> (replied: Bool, ended: Bool, userStarted: Date, outcome: BuiltCommand.Outcome)
    {
        let clip = try Self.clip()
        try await pulse.play(clip)
        let replied = await Self.waitFor(running, #""event":"speakingStarted""#, upTo: .seconds(90))
        try await Task.sleep(for: .milliseconds(1500))
        let userStarted = Date().addingTimeInterval(Double(TalkLoopBenchmark.firstVoicedSample(clip)) / 16_000)
        try await pulse.play(clip)
        let ended = await Self.waitFor(running, turnEnd, count: 2, upTo: .seconds(60))
        try await Task.sleep(for: .seconds(1))
        running.process.terminate()
        return (replied, ended, userStarted, try await running.finish(timeout: .seconds(30)))
    }

    /// What the Gateway received.
    static func transcripts(_ gw: ReferenceGatewayProcess) async throws -> [JSONValue] {
        guard let list = try await offPool({ try gw.control("chat-transcripts") })["transcripts"]?.arrayValue else {
            throw CommandFailure("the reference Gateway's chat-transcripts reply has no list")
        }
        return list
    }

    static func wer(_ hypothesis: String, _ reference: String) -> Double {
        WordErrors.between(reference: TranscriptNormalizer.words(reference), hypothesis: TranscriptNormalizer.words(hypothesis)).rate
    }

    /// Stretches of `samples` louder than speech's quietest, split where it is silent for `gap` or longer.
    static func voicedStretches(_ samples: [Int16], gap: Double = 0.6) -> [(start: Double, end: Double)] {
        let frame = 320
        var stretches: [(start: Double, end: Double)] = []
        for start in stride(from: 0, to: samples.count - frame, by: frame) {
            let rms = (samples[start..<start + frame].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(frame)).squareRoot()
            guard rms > 300 else { continue }
            let t = Double(start) / 16_000
            if let last = stretches.last, t - last.end < gap {
                stretches[stretches.count - 1].end = t + 0.02
            } else {
                stretches.append((t, t + 0.02))
            }
        }
        return stretches
    }

    /// The events by name, with what was heard and when (ms from `since`, the user's start over the reply), so a
    /// failure shows where the user's words were lost and whether the loop lagged behind them.
    static func heard(_ events: Events, since: Date? = nil) -> [String] {
        events.compactMap { event in
            guard let name = event["event"]?.stringValue, name != "replyDelta" else { return nil }
            let text = event["text"]?.stringValue ?? event["reason"]?.stringValue
            let at = since.flatMap { since in
                event["time"]?.stringValue.flatMap(TalkLoopBenchmark.eventTime).map { " @\(Int(($0.timeIntervalSince(since) * 1000).rounded())) ms" }
            } ?? ""
            return (text.map { "\(name)(\($0))" } ?? name) + at
        }
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip, PrivatePulse.utilities), arguments: [
        RunSelfEchoLoopbackTests.Condition(grammar: true, localVoice: false), RunSelfEchoLoopbackTests.Condition(grammar: false, localVoice: false),
        RunSelfEchoLoopbackTests.Condition(grammar: false, localVoice: true),
    ])
    func `with echo cancellation a user speaking over the reply cuts it off and the next chat.send carries the offset`(
        _ condition: RunSelfEchoLoopbackTests.Condition
    ) async throws {
        let grammar = condition.grammar
        try await PrivatePulse.with { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let reply = condition.localVoice ? Self.localVoiceReply : Self.longReply
            _ = try #require(try await offPool { try gw.control(#"{"cmd": "chat-script", "reply": "\#(reply)"}"#) }["ok"] == true)
            if condition.localVoice { try await Self.useLocalVoice(gw) }
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            let running = try await Self.startSession(pulse, gw, command: command, aec: "webrtc", grammar: grammar)
            let (speaking, sentTwice, userStarted, r) = try await Self.speakOverReply(pulse, running, turnEnd: #""event":"transcriptSent""#)
            #expect(speaking && sentTwice, "stderr: \(r.stderr)")
            #expect(r.status == 0, "stderr: \(r.stderr)")

            let events = RunCommandTests.events(r.stdout)
            let bargeIn = try #require(events.first { $0["event"] == "bargeIn" }, "no barge-in: \(Self.heard(events, since: userStarted))")
            let offset = try #require(bargeIn["offsetSeconds"].flatMap { if case .double(let d) = $0 { d } else { $0.intValue.map(Double.init) } })
            #expect(offset > 1, "the reply had played \(offset) s when it was cut")
            let cut = events.filter { $0["event"] == "speakingStopped" && $0["completed"] == false }
            #expect(!cut.isEmpty, "no sentence was cut off")

            let transcripts = try await Self.transcripts(gw)
            let messages = transcripts.compactMap { $0["message"]?.stringValue }
            try #require(messages.count == 2, "\(messages)")
            let prefix = #/^Assistant speech interrupted at (\d+)\.(\d)s\.\n\n/#
            let match = try #require(messages[1].firstMatch(of: prefix), "no interruption prefix: \(messages[1])")
            let sent = Double("\(match.1).\(match.2)") ?? -1
            #expect(abs(sent - offset) <= 0.1, "prefix says \(sent) s, the barge-in \(offset) s")
            let words = String(messages[1][match.range.upperBound...])
            // Both models hear the user's words: the reply is lowered 25 dB from the first 40 ms of their voice.
            // Before it was, WebRTC crushed them under the loud echo and dictation heard "the plumber and leaders".
            #expect(Self.wer(words, RunCommandTests.spoken) <= 0.25, "the Gateway got '\(words)'")
            // The level the user met when they began: the last change before the barge-in lowered the reply, at the
            // first sound of them, or earlier for an utterance the reply's own echo opened just before they spoke and
            // that was still open (then their sound lowers nothing more: it is already low). An utterance the echo
            // opened and closed before they spoke may have lowered and raised it earlier; that does not change what
            // they heard.
            let beforeCut = events.prefix { $0["event"] != "bargeIn" }.filter { $0["event"] == "replyLevel" }
            let levels = beforeCut.map { "\($0["reason"]?.stringValue ?? "?") (\($0["gain"].map { "\($0)" } ?? "?"))" }
            let inForce = beforeCut.last
            let lowered = inForce?["gain"].flatMap { if case .double(let d) = $0 { d } else { $0.intValue.map(Double.init) } }.map { $0 < 1 } ?? false
            let loweredFor = ["sound over the reply", "an utterance opened over the reply"]
            #expect(lowered && loweredFor.contains(inForce?["reason"]?.stringValue ?? ""), "the reply was not lowered as the user began: \(levels)")
        }
    }

    /// Realtime mode, the relay answering in its own voice (the local voice's 25 s reply, paced as `bench talk --mode
    /// realtime` has it sent): the user speaking over the answer 1.5 s in stops it, and the turn the relay finishes
    /// after the cut holds their words, not the answer's echo (its audio from where the relay's VAD heard speech
    /// start, by dictation, as `bench talk` judges a realtime barge-in: `RelayUserTurn`).
    @Test(.requires(.builtBinary, RunCommandTests.clip, PrivatePulse.utilities))
    func `in realtime mode a user speaking over the answer stops it and the relay's next turn is their words`() async throws {
        try await PrivatePulse.with { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let relay = #"{"cmd": "talk-relay", "reply": "\#(Self.localVoiceReply)", "audioPace": 0.9}"#
            _ = try #require(try await offPool { try gw.control(relay) }["ok"] == true)
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            let running = try await Self.startSession(pulse, gw, command: command, aec: "webrtc", grammar: false, arguments: ["--mode", "realtime"])
            // The user's turn ends on the relay's silence after the clip; the answer to it starting is the end.
            let (speaking, answeredAgain, userStarted, r) = try await Self.speakOverReply(pulse, running, turnEnd: #""event":"speakingStarted""#)
            let events = RunCommandTests.events(r.stdout)
            #expect(speaking && answeredAgain, "\(Self.heard(events, since: userStarted)); stderr: \(r.stderr)")
            #expect(r.status == 0, "stderr: \(r.stderr)")

            // The answer's echo cutting it before the user spoke is a self-interruption, not this barge-in.
            let cutAt = events.first { $0["event"] == "bargeIn" }?["time"]?.stringValue.flatMap(TalkLoopBenchmark.eventTime)
            #expect(cutAt.map { $0 > userStarted } ?? true, "cut before the user spoke: \(Self.heard(events, since: userStarted))")
            let turns = try await offPool { try gw.control(#"{"cmd": "relay-turns", "dump": "\#(command.home)"}"#) }["turns"]?.arrayValue ?? []
            switch RelayUserTurn.realtime(events: events, turns: turns) {
            case .notCut:
                Issue.record("the answer was not stopped: \(Self.heard(events, since: userStarted))")
            case .noTurnAfter:
                Issue.record("no turn reached the relay after the cut: \(Self.heard(events, since: userStarted)); turns \(turns)")
            case .answered(let userTurns):
                let words = try await RelayUserTurn.words(userTurns, grammar: nil)
                #expect(Self.wer(words, RunCommandTests.spoken) <= 0.25, "the relay got '\(words)': \(Self.heard(events, since: userStarted))")
            }
        }
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip, PrivatePulse.utilities))
    func `bench talk --json gives every figure the README lists`() async throws {
        try await PrivatePulse.with { pulse in
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            let manifest = command.home + "/manifest.tsv"
            // The clip twice: the second cuts into the reply to the first, so barge-in is timed too.
            let row = "\(try RunCommandTests.clip.path())\t\(RunCommandTests.spoken)\n"
            try ("file\ttranscript\n" + row + row).write(toFile: manifest, atomically: true, encoding: .utf8)
            let r = try await command.run(["bench", "talk", "--json", "--manifest", manifest, "--trials", "1", "--sink", "vsink", "--source", "vmic",
                                           "--repository", TestInputs.packageRoot])
            #expect(r.status == 0, "stderr: \(r.stderr)")
            try BenchCommandLineTests.check(BenchCommandLineTests.talkFigures, readmeFile: "bench-talk.json", output: r.stdout)
        }
    }
}
