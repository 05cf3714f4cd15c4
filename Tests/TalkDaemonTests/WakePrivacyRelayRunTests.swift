import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// Wake-phrase mode with the default `--stt auto` on the virtual microphone and the reference Gateway's
/// transcription relay: until the phrase is found locally no audio and no text leaves the machine (no relay
/// request at all, no `chat.send`); the request that follows the phrase may then go to the relay, and its words
/// are sent. The same after `--idle-timeout` fell back to wake mode. Its name ends in RelayRunTests, so `make
/// test` runs it in the second pass with them.
@Suite(.serialized) struct WakePrivacyRelayRunTests {
    static let relayWords = "the relay heard this"

    /// What the client sent to the Gateway's relays (either era's names), from refgw's log of received frames.
    static func relayRequests(_ gw: ReferenceGatewayProcess) async throws -> [String] {
        let frames = try await offPool { try gw.control("frames") }["frames"]?.arrayValue ?? []
        let prefixes = ["talk.session.", "talk.transcription.", "talk.realtime."]
        return frames.compactMap { entry -> String? in
            if let method = entry["frame"]?["method"]?.stringValue { return prefixes.contains { method.hasPrefix($0) } ? method : nil }
            // A large frame is logged as a preview of its JSON text (json.dumps: `"method": "..."`).
            guard let text = entry["frame"]?.stringValue, prefixes.contains(where: { text.contains(#""method": "\#($0)"#) }) else { return nil }
            return "a large relay request"
        }
    }

    @Test(.requires(.builtBinary, RunCommandTests.clip, PrivatePulse.utilities),
          .requires(RunModesCommandTests.tools[0], RunModesCommandTests.tools[1]), arguments: ["--wake", "--idle-timeout"])
    func `before the wake phrase the relay receives nothing; the request after it goes to the relay`(mode: String) async throws {
        try await PrivatePulse.with { pulse in
            let gw = try await RelayRunTests.gateway()
            defer { gw.stop() }
            _ = try await RelayRunTests.control(gw, #"{"cmd": "voicewake-set", "triggers": ["robot"]}"#)
            _ = try await RelayRunTests.control(gw, #"{"cmd": "talk-relay", "texts": ["\#(Self.relayWords)"]}"#)
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            let grammar = command.home + "/wake.gram"
            try RunModesCommandTests.grammar.write(toFile: grammar, atomically: true, encoding: .utf8)
            let robot = try await RunModesCommandTests.word("robot", in: command.home)
            let clip = try RunModesCommandTests.goForward()
            // --idle-timeout: long enough that the request played after the wake phrase starts inside it on a loaded
            // machine (the phrase's event, two Gateway look-ups and the clip's lead-in come first; 2 s was seen
            // running out under load, sending the loop back to wake mode before the request), short enough that the
            // first fallback to wake mode does not drag the test out.
            let idleSeconds = "6"
            // No --stt: the default, auto, which uses the relay when the Gateway offers it (refgw does).
            let running = try command.start([
                "run", "--gateway", gw.startup.url, "--token", RunCommandTests.token, "--source", "vmic", "--sink", "vsink",
                "--json", "--seconds", "150", "--grammar", grammar, "--max-turns", "1",
            ] + (mode == "--wake" ? ["--wake"] : ["--idle-timeout", idleSeconds]))
            let inWakeMode = mode == "--wake" ? #""to":"waiting""# : #""to":"wake""#
            try #require(await RunLoopbackTests.waitFor(running, inWakeMode), "never waited for the phrase: \(running.stderrSoFar)")
            // The endpointer's noise floor settles on the (silent) microphone first.
            try await Task.sleep(for: .seconds(1))

            // Speech without the phrase: heard, ignored, and nothing of it goes out.
            try await pulse.play(clip)
            let ignored = await RunLoopbackTests.waitFor(running, #""reason":"no wake phrase""#)
            let beforePhrase = try await Self.relayRequests(gw)
            let sentBefore = try await RunLoopbackTests.transcripts(gw)
            #expect(ignored, "the speech without the phrase was not heard: \(RunLoopbackTests.heard(RunCommandTests.events(running.stdoutSoFar)))")
            #expect(beforePhrase.isEmpty, "the relay got \(beforePhrase.count) requests before the wake phrase: \(beforePhrase.prefix(6))")
            #expect(sentBefore.isEmpty, "\(sentBefore)")

            // The phrase on its own, then the request: the relay may take the request, and its words go out.
            try await pulse.play(robot)
            let woke = await RunLoopbackTests.waitFor(running, #""event":"wakePhrase""#)
            let afterPhrase = try await Self.relayRequests(gw)
            #expect(woke, "the wake phrase was not heard: \(RunLoopbackTests.heard(RunCommandTests.events(running.stdoutSoFar)))")
            #expect(afterPhrase.isEmpty, "the phrase itself went to the relay: \(afterPhrase.prefix(6))")
            try await pulse.play(clip)
            let sent = await RunLoopbackTests.waitFor(running, #""event":"transcriptSent""#)
            let r = try await running.finish(timeout: .seconds(90))
            #expect(sent && r.status == 0, "stderr: \(r.stderr)")
            let events = RunCommandTests.events(r.stdout)
            let messages = try await RunLoopbackTests.transcripts(gw).compactMap { $0["message"]?.stringValue }
            #expect(messages == [Self.relayWords], "the request after the phrase, in the relay's words: \(messages); \(RunLoopbackTests.heard(events))")
            let source = RelayRunTests.sourceEvents(events)
            #expect(source.count == 1 && source.first?["engine"] == "gateway-relay", "only the request went to the relay: \(source)")
            let requests = try await Self.relayRequests(gw)
            #expect(requests.contains("talk.session.appendAudio"), "\(requests.prefix(6))")
            try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
            #expect(try await RelayRunTests.control(gw, "violations")["count"] == 0)
        }
    }
}
