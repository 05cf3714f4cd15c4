import AudioIO
import Foundation
import SpeechRecognition
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `openclaw-talk run --source vmic --sink vsink` on a headless PulseAudio of the test's own, its reply heard on
/// the microphone as a loudspeaker's would be (see `RunLoopbackTests`): with echo cancellation on, the reply's own
/// echo neither cuts it off nor comes back as a turn, in native and in realtime mode. A pass of its own in
/// `make test`: the live timing it depends on needs the machine to itself.
@Suite(.serialized) struct RunSelfEchoLoopbackTests {
    struct Condition: Sendable, CustomTestStringConvertible {
        var grammar: Bool
        /// The local voice and a 25 s reply, rather than the Gateway's voice and a 9 s one.
        var localVoice: Bool
        var testDescription: String { (grammar ? "grammar" : "dictation") + (localVoice ? ", local voice, 25 s reply" : ", Gateway's voice") }
    }

    /// One session on the loopback against `gw`, its reply set up: the clip played once, the reply left to play to
    /// its end, then time for its echo's last words to make an utterance or a turn after the silence window, and the
    /// session stopped. Whether the reply ended (left speaking) before then, the session's outcome, and the voiced
    /// seconds of reply the sink played after the clip.
    static func session(_ pulse: PrivatePulse, _ gw: ReferenceGatewayProcess, grammar: Bool, arguments: [String] = []) async throws
        -> (ended: Bool, outcome: BuiltCommand.Outcome, replySeconds: Double, sink: String)
    {
        let command = try BuiltCommand(through: pulse.launcher)
        defer { command.removeHome() }
        let recording = try pulse.record()
        let running = try await RunLoopbackTests.startSession(pulse, gw, command: command, aec: "webrtc", grammar: grammar, arguments: arguments)
        try await pulse.play(try RunLoopbackTests.clip())
        let ended = await RunLoopbackTests.waitFor(running, #""from":"speaking""#, upTo: .seconds(90))
        // The echo's last words would close an utterance after the silence window: give it time to.
        try await Task.sleep(for: .seconds(3))
        running.process.terminate()
        let outcome = try await running.finish(timeout: .seconds(30))
        let stretches = RunLoopbackTests.voicedStretches(try await recording.finish())
        let clipEnd = try #require(stretches.first?.end, "nothing recorded from vsink")
        let replyVoiced = stretches.dropFirst().filter { $0.start > clipEnd }
        return (ended, outcome, (replyVoiced.last?.end ?? 0) - (replyVoiced.first?.start ?? 0), "\(stretches)")
    }

    /// With the goforward grammar and with the default dictation model, which makes words of the echo. With
    /// dictation the canceller has not converged when a reply starts, on this monitor its reference starts out
    /// misplaced by up to 200 ms, its first syllables leak and dictation hears new words in them: before
    /// `ResidualEchoSuppressor`, barge-in cut the reply off in every run of the dictation case.
    ///
    /// And as a user gets it from a Gateway without a Talk provider: the local voice (espeak-ng in process) with a
    /// reply of about 25 s and dictation. There the residual echo passed both guards and dictation's words cut the
    /// reply off in 4 of 6 loopback sessions, until barge-in asked how much of what it heard the reply explains.
    @Test(.requires(.builtBinary, RunCommandTests.clip, PrivatePulse.utilities), arguments: [
        Condition(grammar: true, localVoice: false), Condition(grammar: false, localVoice: false), Condition(grammar: false, localVoice: true),
    ])
    func `with echo cancellation the reply's echo in the microphone neither cuts it off nor comes back as a turn`(_ condition: Condition) async throws {
        let grammar = condition.grammar
        try await PrivatePulse.with { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let reply = condition.localVoice ? RunLoopbackTests.localVoiceReply : RunLoopbackTests.reply
            _ = try #require(try await offPool { try gw.control(#"{"cmd": "chat-script", "reply": "\#(reply)"}"#) }["ok"] == true)
            if condition.localVoice { try await RunLoopbackTests.useLocalVoice(gw) }
            let (spoke, r, replySeconds, sink) = try await Self.session(pulse, gw, grammar: grammar)
            #expect(spoke, "the reply never finished: \(r.stderr)")
            #expect(r.status == 0, "stderr: \(r.stderr)")
            let events = RunCommandTests.events(r.stdout)
            let names = events.compactMap { $0["event"]?.stringValue }
            #expect(events.first?["event"] == "echoCancellation" && events.first?["mode"] == "webrtc", "\(String(describing: events.first))")

            // The clip reached the Gateway once, recognised (nearly) as said.
            let transcripts = try await RunLoopbackTests.transcripts(gw)
            #expect(transcripts.count == 1, "not one turn: \(transcripts); events \(names); stderr \(r.stderr.suffix(1500))")
            let heard = transcripts.first?["message"]?.stringValue ?? ""
            #expect(RunLoopbackTests.wer(heard, RunCommandTests.spoken) <= 0.25, "the Gateway got '\(heard)'")
            #expect(transcripts.first?["sends"]?.intValue == 1)

            // It never cut itself off: every sentence played to its end, one turn only.
            #expect(!names.contains("bargeIn"), "the reply's echo interrupted it: \(events.filter { $0["event"] == "bargeIn" })")
            let stopped = events.filter { $0["event"] == "speakingStopped" }
            let sentences = condition.localVoice ? RunLoopbackTests.localVoiceSentences : 3
            #expect(stopped.count == sentences && stopped.allSatisfy { $0["completed"] == true }, "all \(sentences) sentences: \(stopped)")
            let voices = Set(events.filter { $0["event"] == "speakingStarted" }.compactMap { $0["voice"]?.stringValue?.prefix(5) })
            #expect(voices == [condition.localVoice ? "local" : "gatew"], "spoken in \(voices)")
            let states = events.filter { $0["event"] == "state" }.compactMap { $0["to"]?.stringValue }
            #expect(states == ["listening", "thinking", "speaking", "listening", "idle"], "\(states)")

            // The sink heard the clip and then the reply, voiced and about as long as its words take to say: 27 words
            // at 175 words per minute, about 9 s; the local voice's reply 73 words, about 25 s.
            #expect((condition.localVoice ? 18...40 : 5...16).contains(replySeconds), "the reply took \(replySeconds) s in the sink: \(sink)")
        }
    }

    /// Realtime mode, with an answer of about 25 s in the relay's voice (the local voice's reply, sent at a little over
    /// real time as `bench talk --mode realtime` has the relay send it): its echo neither cuts it off (the client's
    /// barge-in guard, the relay's own voice detection clearing it, the client's output queue overflowing) nor
    /// comes back as a turn or a second answer, and the whole answer plays in the sink.
    @Test(.requires(.builtBinary, RunCommandTests.clip, PrivatePulse.utilities))
    func `in realtime mode the answer's echo in the microphone neither cuts it off nor comes back as a turn`() async throws {
        try await PrivatePulse.with { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let relay = #"{"cmd": "talk-relay", "reply": "\#(RunLoopbackTests.localVoiceReply)", "audioPace": 0.9}"#
            _ = try #require(try await offPool { try gw.control(relay) }["ok"] == true)
            let (spoke, r, answerSeconds, sink) = try await Self.session(pulse, gw, grammar: false, arguments: ["--mode", "realtime"])
            #expect(spoke, "the answer never finished: \(r.stderr)")
            #expect(r.status == 0, "stderr: \(r.stderr)")
            let events = RunCommandTests.events(r.stdout)
            let log = try await offPool { try gw.control(#"{"cmd": "relay-log"}"#) }["log"]?.arrayValue ?? []
            let turns = try await offPool { try gw.control(#"{"cmd": "relay-turns"}"#) }["turns"]?.arrayValue ?? []
            let relayTurns = turns.filter { $0["mode"] == "realtime" }.count
            let verdict = SelfEchoVerdict(events: events, turnEvent: "final", relay: .init(log: log, turns: relayTurns))
            #expect(verdict.replied && verdict.finished, "the answer did not play to its end: \(RunLoopbackTests.heard(events))")
            let interruptions = "\(verdict.reasons), heard '\(verdict.partial ?? "")': \(RunLoopbackTests.heard(events)); relay log \(log)"
            #expect(verdict.reasons.isEmpty, "the answer interrupted itself: \(interruptions)")
            #expect(relayTurns == 1, "not one turn: \(turns)")
            #expect((18...40).contains(answerSeconds), "the answer took \(answerSeconds) s in the sink: \(sink)")
        }
    }

    /// `--aec pulse` itself is not run here: on a null sink whose monitor feeds the microphone, PulseAudio 16
    /// deadlocks as soon as a stream records from module-echo-cancel's source (and then will not exit), and a
    /// monitor cannot be the module's master source. `PulseEchoCancelModuleTests` loads and unloads it.
    @Test(.requires(.builtBinary))
    func `--aec pulse with a file for a device, or an unknown mode, is refused before anything starts`() async throws {
        let pulse = try await BuiltCommand.run(["run", "--aec", "pulse", "--input", "/dev/null", "--sink", "vsink", "--gateway", "ws://127.0.0.1:9", "--token", "t"])
        #expect(pulse.status != 0)
        #expect(pulse.stderr.contains("'--aec pulse' needs PulseAudio for both"), "\(pulse.stderr)")
        let unknown = try await BuiltCommand.run(["run", "--aec", "speex"])
        #expect(unknown.status != 0 && unknown.stderr.contains("expected auto, webrtc, pulse or off"), "\(unknown.stderr)")
    }
}
