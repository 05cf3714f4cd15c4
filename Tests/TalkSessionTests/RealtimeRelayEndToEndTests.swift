import AudioIO
import Foundation
import SessionBridge
import TalkBench
import TalkLogging
import TalkTestSupport
import Testing

@testable import TalkSession

/// `RealtimeTalkSession` through the real `TalkRelayClient` against the reference Gateway's realtime relay, end to
/// end: the microphone's speech is transcribed, answered in audio, and the marks behind the answer's audio
/// acknowledged only after it played. The loop's own behaviour is tested on a scripted relay (`RealtimeTalkSessionTests`).
@Suite(.serialized) struct RealtimeRelayEndToEndTests {
    static let token = "realtime-test-token"

    /// A realtime session through `TalkRelayClient` on a fresh reference Gateway whose relay has `relaySettings`.
    struct Rig {
        let gateway: ReferenceGatewayProcess
        let run: Task<Void, Never>
        let session: RealtimeTalkSession
        let mic = FakeMicrophone()
        let speaker = PacedSpeaker(speed: 1)
        let log = EventLog()

        init(relaySettings: String) async throws {
            let gateway = try await offPool {
                try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot,
                                            arguments: ["--token", RealtimeRelayEndToEndTests.token, "--auto-approve", "--realtime-uplink", "pcm16/16000"])
            }
            self.gateway = gateway
            _ = try await offPool { try gateway.control(#"{"cmd": "talk-relay", "# + relaySettings + "}") }
            let logger = Logger(label: "realtime-test", handler: InMemoryLogHandler())
            let connection = try gateway.connection(
                token: RealtimeRelayEndToEndTests.token,
                profile: .operator(scopes: ["operator.read", "operator.write", "operator.talk"], displayName: "rt", version: "0.1.0-test"),
                logger: logger)
            run = Task { await connection.run() }
            var settings = TalkRelayClient.Settings()
            settings.sessionKey = "agent:main:main"
            let client = TalkRelayClient(gateway: connection, mode: .realtime, settings: settings, logger: logger)
            session = RealtimeTalkSession(capture: mic, playback: speaker, relay: client, logger: logger)
            let (log, events) = (log, session.events)
            Task { for await event in events { await log.append(event) } }
            let deadline = ContinuousClock.now + .seconds(15)
            while await connection.hello == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            try await session.start()
        }

        /// `count` frames of `amplitude`, each `explained` by the answer's audio, at the microphone's pace.
        func speak(amplitude: Int16, count: Int, explained: Float? = nil) async throws {
            for _ in 0..<count {
                await mic.push(amplitude: amplitude, count: 1, echoExplained: explained)
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        /// A second of sound, then the 800 ms of silence that end the relay's turn.
        func ask() async throws {
            try await speak(amplitude: 3_000, count: 50)
            try await speak(amplitude: 0, count: 40)
        }

        /// Ends the connection and the Gateway (also when a test stops early).
        func close() {
            run.cancel()
            gateway.stop()
        }
    }

    @Test func `a turn is answered in audio, played whole, and each of its marks acknowledged after it played`() async throws {
        let rig = try await Rig(relaySettings: #""texts": ["hello there"], "audioPace": 0.3"#)
        defer { rig.close() }
        let (gateway, session, speaker, log) = (rig.gateway, rig.session, rig.speaker, rig.log)
        try await rig.ask()
        #expect(await log.waitFor { if case .finalTranscript("hello there", "gateway-realtime", _, _, _) = $0 { true } else { false } })
        #expect(await log.waitFor { if case .replyFinal("you said hello there") = $0 { true } else { false } })
        #expect(await log.waitFor { $0 == .turnEnded(reason: .replyDone) })
        let relayLog = try await Self.relayLog(gateway) { log in
            log.contains { $0["kind"] == "mark-ack" && $0["pending"] == 0 && $0["outstanding"] == true }
        }
        let answered = relayLog.first { $0["kind"] == "answered" }
        let marks = try #require(answered?["marks"]?.intValue)
        #expect(marks > 3, "the relay sent \(marks) marks")
        // The relay's marks count up behind each chunk (audio-1 ...): the last one acknowledged, none left pending.
        let acks = relayLog.filter { $0["kind"] == "mark-ack" }
        #expect(acks.last?["markName"]?.stringValue == "audio-\(marks)", "\(acks)")
        #expect(acks.allSatisfy { $0["outstanding"] == true }, "\(acks)")
        // The answer played whole, and its last mark was acknowledged only after.
        let bytes = Double(answered?["audioBytes"]?.intValue ?? 0)
        let played = await speaker.playedSeconds
        #expect(abs(played - bytes / 48_000) < 0.05, "played \(played) s of \(bytes / 48_000) s")
        let finished = try #require(await speaker.lastFinished)
        let ackedAt = Date(timeIntervalSince1970: Double(acks.last?["ts"]?.intValue ?? 0) / 1000)
        #expect(ackedAt.timeIntervalSince(finished) > -0.05, "the last mark was acknowledged \(finished.timeIntervalSince(ackedAt)) s before playback ended")
        #expect(await log.count { $0 == .turnEnded(reason: .replyDone) } == 1)
        #expect(await log.states.contains(.speaking))
        await session.stop()
        try TestInput.requireSchemaCheck(reportedByGateway: gateway.startup.schema, "the schema check of the frames sent")
        let violations = try await offPool { try gateway.control("violations") }
        #expect(violations["count"] == 0, "schema violations: \(violations)")
    }

    /// The relay's log once `done` holds of it (the client acknowledges marks after their audio, a little after the
    /// turn ends); the last one read when it never does, for the test's own expectations to fail on.
    static func relayLog(_ gateway: ReferenceGatewayProcess, until done: ([JSONValue]) -> Bool) async throws -> [JSONValue] {
        let deadline = ContinuousClock.now + .seconds(15)
        while true {
            let log = try await offPool { try gateway.control("relay-log") }["log"]?.arrayValue ?? []
            if done(log) || ContinuousClock.now >= deadline { return log }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// A relay created as upstream's was before (`markStrategy: "ack-immediately"`, talk-realtime-relay.ts @0a44de75)
    /// acknowledges its provider's marks itself and sends none: the answer still plays whole and its turn ends once,
    /// on its `audioDone`, and nothing is acknowledged.
    @Test func `a relay that sends no marks still has its answer played whole, its turn ended once`() async throws {
        let rig = try await Rig(relaySettings: #""texts": ["hello there"], "audioPace": 0.3, "markStrategy": "ack-immediately""#)
        defer { rig.close() }
        try await rig.ask()
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .replyDone) })
        let relayLog = try await offPool { try rig.gateway.control("relay-log") }["log"]?.arrayValue ?? []
        let bytes = Double(relayLog.first { $0["kind"] == "answered" }?["audioBytes"]?.intValue ?? 0)
        let played = await rig.speaker.playedSeconds
        #expect(bytes > 0 && abs(played - bytes / 48_000) < 0.05, "played \(played) s of \(bytes / 48_000) s")
        #expect(await rig.log.count { $0 == .turnEnded(reason: .replyDone) } == 1)
        #expect(!relayLog.contains { $0["kind"] == "mark-ack" }, "a mark was acknowledged: \(relayLog)")
        await rig.session.stop()
    }

    /// A loaded Gateway or a slow network holds the rest of the answer back longer than what is queued: it is still one
    /// answer, played whole, and its turn ends once, after it.
    @Test func `a gap in the relay's audio leaves one answer, played whole`() async throws {
        let rig = try await Rig(relaySettings: #""texts": ["hello there"], "audioPace": 0.3, "audioGapMs": 600"#)
        defer { rig.close() }
        try await rig.ask()
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .replyDone) })
        #expect(await rig.log.count { if case .speakingStarted = $0 { true } else { false } } == 1, "the gap split the answer")
        let relayLog = try await offPool { try rig.gateway.control("relay-log") }["log"]?.arrayValue ?? []
        let bytes = Double(relayLog.first { $0["kind"] == "answered" }?["audioBytes"]?.intValue ?? 0)
        let played = await rig.speaker.playedSeconds
        #expect(abs(played - bytes / 48_000) < 0.05, "played \(played) s of \(bytes / 48_000) s")
        #expect(await rig.log.count { $0 == .turnEnded(reason: .replyDone) } == 1)
        await rig.session.stop()
    }

    /// The relay's provider takes what its VAD hears for the user and cancels the answer (upstream creates the bridge
    /// with `interruptResponseOnInputAudio`; the reference relay's stand-in VAD: 100 ms of RMS 400 in a row).
    @Test func `the canceller's leak of the answer does not make the relay's VAD cut the answer off`() async throws {
        let rig = try await Rig(relaySettings: #""texts": ["hello there"], "audioPace": 0.3, "reply": "you said {text}, and this answer goes on for a few seconds more""#)
        defer { rig.close() }
        try await rig.ask()
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        // The leak at a loud word's onset (300 ms at RMS 3 000), explained by the answer's audio, then its quiet rest.
        try await rig.speak(amplitude: 3_000, count: 15, explained: 1)
        try await rig.speak(amplitude: 40, count: 25, explained: 1)
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .replyDone) }, "the answer did not play to its end")
        #expect(await rig.log.events.filter { if case .bargeIn = $0.kind { true } else { false } }.isEmpty, "the answer was cut off")
        let relayLog = try await offPool { try rig.gateway.control("relay-log") }["log"]?.arrayValue ?? []
        #expect(!relayLog.contains { $0["kind"] == "server-vad-clear" && $0["answerCancelled"] == true }, "the relay's VAD heard the leak as speech")
        await rig.session.stop()
    }

    /// A user a metre from speakers at full level speaks under the answer's echo: their frames never read under half
    /// explained, but once the answer is lowered for them the gate lets them through, and the relay's VAD cuts it off.
    @Test func `a user quieter than the answer's echo is heard by the relay's VAD once the answer is lowered`() async throws {
        let rig = try await Rig(relaySettings: #""texts": ["hello there"], "audioPace": 0.3, "reply": "you said {text}, and this answer goes on for a few seconds more""#)
        defer { rig.close() }
        try await rig.ask()
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        try await rig.speak(amplitude: 0, count: 15)   // past the session's 250 ms before sound may lower the answer
        // RMS 600: over the relay's stand-in VAD (400), 0.9 explained by the answer's level throughout.
        try await rig.speak(amplitude: 600, count: 40, explained: 0.9)
        #expect(await rig.log.waitFor { if case .bargeIn = $0 { true } else { false } }, "the quiet user never cut the answer off")
        let relayLog = try await offPool { try rig.gateway.control("relay-log") }["log"]?.arrayValue ?? []
        #expect(relayLog.contains { $0["kind"] == "server-vad-clear" }, "the relay's VAD never heard the user")
        await rig.session.stop()
    }
}
