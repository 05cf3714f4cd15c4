import AudioIO
import Foundation
import SessionBridge
import TalkLogging
import TalkTestSupport
import Testing

@testable import TalkSession

/// `RealtimeTalkSession` against the reference Gateway's realtime relay: a turn answered in audio with its
/// mark acknowledged after playback, a tool call answered by the agent, barge-in cancelling the turn and
/// dropping its late audio, and the in-flight limit.
@Suite(.serialized) struct RealtimeTalkSessionTests {
    static let token = "realtime-test-token"

    /// Plays in real time (or `speed` times faster); `stop()` cuts the buffer playing.
    actor PacedSpeaker: AudioPlaybackDevice {
        let speed: Double
        private(set) var played: [(samples: Int, at: ContinuousClock.Instant)] = []
        private(set) var stops = 0
        /// When the last buffer finished playing (wall clock, to compare with the Gateway's records).
        private(set) var lastFinished: Date?
        private var generation = 0

        init(speed: Double = 1) { self.speed = speed }

        func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome {
            played.append((buffer.samples.count, .now))
            let mine = generation
            let seconds = Double(buffer.samples.count) / Double(buffer.sampleRate) / speed
            let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while ContinuousClock.now < end {
                try? await Task.sleep(for: .milliseconds(10))
                if generation != mine { return .stopped }
            }
            lastFinished = Date()
            return .completed
        }

        func stop() {
            generation += 1
            stops += 1
        }

        func setGain(_ gain: Float) {}
        func close() {}
        var playedSeconds: Double { Double(played.reduce(0) { $0 + $1.samples }) / 24_000 }
    }

    struct Rig {
        let gateway: ReferenceGatewayProcess
        let connection: GatewayConnection
        let run: Task<Void, Never>
        let mic: FakeMicrophone
        let speaker: PacedSpeaker
        let session: RealtimeTalkSession
        let client: TalkRelayClient
        let log = EventLog()

        static func start(speed: Double = 4, relay: String, extra: [String] = [],
                          settings: RealtimeTalkSession.Settings = RealtimeTalkSession.Settings(),
                          maxUnansweredAudio: Duration? = nil) async throws -> Rig {
            let gateway = try await offPool {
                try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot,
                                            arguments: ["--token", token, "--auto-approve", "--realtime-uplink", "pcm16/16000"] + extra)
            }
            _ = try await offPool { try gateway.control(relay) }
            let logs = InMemoryLogHandler.Store()
            let logger = Logger(label: "realtime-test", handler: InMemoryLogHandler(store: logs))
            let connection = try gateway.connection(
                token: token, profile: .operator(scopes: ["operator.read", "operator.write", "operator.talk"], displayName: "rt", version: "0.1.0-test"),
                logger: logger)
            let run = Task { await connection.run() }
            let deadline = ContinuousClock.now + .seconds(15)
            while await connection.hello == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            var clientSettings = TalkRelayClient.Settings()
            clientSettings.sessionKey = "agent:main:main"
            if let maxUnansweredAudio { clientSettings.maxUnansweredAudio = maxUnansweredAudio }
            let client = TalkRelayClient(gateway: connection, mode: .realtime, settings: clientSettings, logger: logger)
            let speaker = PacedSpeaker(speed: speed)
            let mic = FakeMicrophone()
            let session = RealtimeTalkSession(capture: mic, playback: speaker, relay: client, settings: settings, logger: logger)
            let rig = Rig(gateway: gateway, connection: connection, run: run, mic: mic, speaker: speaker, session: session, client: client)
            let log = rig.log
            Task { for await event in session.events { await log.append(event) } }
            try await session.start()
            return rig
        }

        /// `frames` 20 ms frames pushed in real time (square wave of `amplitude`; 0 is silence).
        func speak(amplitude: Int16, frames: Int) async throws {
            for _ in 0..<frames {
                await mic.push(amplitude: amplitude, count: 1)
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        /// `frames` 20 ms frames pushed in real time, returning once the session has heard them all: their audio
        /// (PCM16 at 16 kHz, 640 bytes a frame; a multiple of 5 frames fills whole 100 ms appends) is on the wire,
        /// which the session writes only after it has weighed each frame for barge-in.
        func speakHeard(amplitude: Int16, frames: Int) async throws -> Bool {
            let before = await client.statistics.payloadBytes
            try await speak(amplitude: amplitude, frames: frames)
            return try await eventually { await client.statistics.payloadBytes >= before + frames * 640 }
        }

        func relayLog() async throws -> [JSONValue] {
            try await offPool { try gateway.control("relay-log") }["log"]?.arrayValue ?? []
        }

        /// Ends the session, then fails the test on any frame it sent that broke the schema (skipped without it).
        func stop() async throws {
            await session.stop()
            defer {
                run.cancel()
                gateway.stop()
            }
            try TestInput.requireSchemaCheck(reportedByGateway: gateway.startup.schema, "the schema check of the frames sent")
            let violations = try await offPool { try gateway.control("violations") }
            #expect(violations["count"] == 0, "schema violations: \(violations)")
        }

    }

    @Test func `a turn is answered in audio and its mark is acknowledged after playback`() async throws {
        let rig = try await Rig.start(speed: 1, relay: #"{"cmd": "talk-relay", "texts": ["hello there"], "audioPace": 0.3}"#)
        try await rig.speak(amplitude: 3_000, frames: 50)
        try await rig.speak(amplitude: 0, frames: 40)
        #expect(await rig.log.waitFor { if case .finalTranscript("hello there", "gateway-realtime", _, _, _) = $0 { true } else { false } })
        #expect(await rig.log.waitFor { if case .replyFinal("you said hello there") = $0 { true } else { false } })
        #expect(await rig.log.waitFor { $0 == .relayNote("mark reply-end acknowledged") })
        let acked = try await rig.relayLog().first { $0["kind"] == "mark-ack" }
        let answered = try await rig.relayLog().first { $0["kind"] == "answered" }
        #expect(acked?["markName"] == "reply-end")
        // Acknowledged only once the audio before it had played: all of it reached the speaker first.
        let bytes = Double(answered?["audioBytes"]?.intValue ?? 0)
        let played = await rig.speaker.playedSeconds
        #expect(abs(played - bytes / 48_000) < 0.05, "played \(played) s of \(bytes / 48_000) s")
        let finished = try #require(await rig.speaker.lastFinished)
        let ackedAt = Date(timeIntervalSince1970: Double(acked?["ts"]?.intValue ?? 0) / 1000)
        #expect(ackedAt.timeIntervalSince(finished) > -0.05, "the mark was acknowledged \(finished.timeIntervalSince(ackedAt)) s before playback ended")
        #expect(await rig.log.states.contains(.speaking))
        try await rig.stop()
    }

    @Test func `a tool call is answered by the agent's run and spoken`() async throws {
        let rig = try await Rig.start(relay: #"{"cmd": "talk-relay", "texts": ["what time is it"], "audioPace": 0.3, "toolCall": {"name": "openclaw_agent_consult", "args": {"question": "time?"}}}"#)
        _ = try await offPool { try rig.gateway.control(#"{"cmd": "chat-script", "reply": "it is noon"}"#) }
        try await rig.speak(amplitude: 3_000, frames: 50)
        try await rig.speak(amplitude: 0, frames: 40)
        #expect(await rig.log.waitFor { $0 == .relayNote("tool call openclaw_agent_consult answered") })
        #expect(await rig.log.waitFor { if case .replyFinal("it is noon") = $0 { true } else { false } })
        let log = try await rig.relayLog()
        let consult = log.first { $0["kind"] == "consult" }
        let result = log.first { $0["kind"] == "tool-result" }
        #expect(consult?["sessionKey"] == "agent:main:main")
        #expect(result?["result"] == ["text": "it is noon"], "\(String(describing: result))")
        try await rig.stop()
    }

    /// Each tool call is an agent run (billed) and a wait of up to 120 s: a relay asking ten at once gets four
    /// answered and six refused at once with an error result, and no task or subscription is left behind.
    @Test func `a burst of tool calls is answered four at a time, the rest refused at once`() async throws {
        let rig = try await Rig.start(relay: #"{"cmd": "talk-relay", "texts": ["what time is it"], "audioPace": 0.3, "toolCallCopies": 10, "toolCall": {"name": "openclaw_agent_consult", "args": {"question": "time?"}}}"#)
        // The agent takes a second to answer: every call has arrived while the first ones are still running.
        _ = try await offPool { try rig.gateway.control(#"{"cmd": "chat-script", "reply": "it is noon", "delayMs": 1000}"#) }
        try await rig.speak(amplitude: 3_000, frames: 50)
        try await rig.speak(amplitude: 0, frames: 40)
        #expect(await rig.log.waitFor { if case .replyFinal("it is noon") = $0 { true } else { false } })
        let log = try await rig.relayLog()
        let results = log.filter { $0["kind"] == "tool-result" }
        #expect(results.count == 10, "\(results.count) tool results")
        #expect(log.filter { $0["kind"] == "consult" }.count == 4, "consults: \(log.filter { $0["kind"] == "consult" }.count)")
        #expect(results.filter { $0["result"]?["error"] != nil }.count == 6)
        var inFlight = await rig.session.toolCallsInFlight
        for _ in 0..<100 where inFlight > 0 {
            try await Task.sleep(for: .milliseconds(20))
            inFlight = await rig.session.toolCallsInFlight
        }
        #expect(inFlight == 0)
        try await rig.stop()
    }

    @Test func `a control tool call goes to talk.session.steer and its result is spoken`() async throws {
        let rig = try await Rig.start(relay: #"{"cmd": "talk-relay", "texts": ["are you on it"], "audioPace": 0.3, "toolCall": {"name": "openclaw_agent_control", "args": {"mode": "status", "text": "status"}}}"#)
        try await rig.speak(amplitude: 3_000, frames: 50)
        try await rig.speak(amplitude: 0, frames: 45)
        #expect(await rig.log.waitFor { $0 == .relayNote("tool call openclaw_agent_control answered") })
        #expect(await rig.log.waitFor { if case .replyFinal("No run is active.") = $0 { true } else { false } })
        let log = try await rig.relayLog()
        let steer = log.first { $0["kind"] == "steer" }
        #expect(steer?["mode"] == "status" && steer?["text"] == "status" && steer?["sessionKey"] == "agent:main:main", "\(String(describing: steer))")
        #expect(!log.contains { $0["kind"] == "consult" }, "the control tool went out as a consult: \(log)")
        let result = log.first { $0["kind"] == "tool-result" }
        #expect(result?["result"]?["mode"] == "status" && result?["result"]?["active"] == false, "\(String(describing: result))")
        try await rig.stop()   // and no violation: refgw records a control answered without a steer
    }

    @Test func `speech over the reply cancels its turn and its late audio is dropped`() async throws {
        let rig = try await Rig.start(speed: 1, relay: #"{"cmd": "talk-relay", "texts": ["x"], "audioPace": 0.5, "reply": "a long answer that takes a good few seconds to say out loud, and then some more"}"#)
        try await rig.speak(amplitude: 3_000, frames: 50)
        try await rig.speak(amplitude: 0, frames: 45)   // the relay ends a turn on 800 ms of silence received
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        try await Task.sleep(for: .milliseconds(400))
        try await rig.speak(amplitude: 6_000, frames: 10)   // RMS 6000 > 0.08 of full scale
        #expect(await rig.log.waitFor { if case .bargeIn = $0 { true } else { false } })
        #expect(await rig.log.waitFor { $0 == .relayNote("output cleared") })
        let cancel = try await rig.relayLog().first { $0["kind"] == "cancel" }
        #expect(cancel?["status"] == "applied" && cancel?["reason"] == "barge-in", "\(String(describing: cancel))")
        let turnId = try #require(cancel?["turnId"]?.stringValue)
        let playedAtCancel = await rig.speaker.played.count
        // A late chunk of the cancelled turn, as a slow Gateway might still send it: never played.
        let late = JSONValue.object(["relaySessionId": .string(await rig.sessionId() ?? ""), "type": "audio",
                                     "audioBase64": .string(Data(repeating: 1, count: 4_800).base64EncodedString()),
                                     "talkEvent": ["type": "output.audio.delta", "turnId": .string(turnId)]])
        let frame = JSONValue.object(["type": "event", "event": "talk.event", "payload": late]).jsonText
        let dropped = await rig.client.statistics.staleEvents
        _ = try await offPool { try rig.gateway.control(JSONValue.object(["cmd": "send-raw", "text": .string(frame)]).jsonText) }
        // The client dropped it as audio of a cancelled turn: it never reached the player.
        #expect(try await rig.eventually { await rig.client.statistics.staleEvents > dropped }, "the late chunk never arrived")
        #expect(await rig.speaker.played.count == playedAtCancel, "audio of the cancelled turn was played")
        try await rig.stop()
    }

    @Test func `after a reconnect the relay session is made again and the next turn is answered`() async throws {
        let rig = try await Rig.start(relay: #"{"cmd": "talk-relay", "texts": ["after the drop"], "audioPace": 0.2}"#)
        let first = await rig.sessionId()
        _ = try await offPool { try rig.gateway.control("drop") }
        let back = try await rig.eventually {
            let hello = await rig.connection.hello
            let session = await rig.sessionId()
            return hello != nil && session == nil
        }
        #expect(back)
        try await rig.speak(amplitude: 0, frames: 10)   // the next frames find the session gone and make a new one
        try await rig.speak(amplitude: 3_000, frames: 50)
        try await rig.speak(amplitude: 0, frames: 40)
        #expect(await rig.log.waitFor { if case .replyFinal("you said after the drop") = $0 { true } else { false } })
        let created = try await rig.relayLog().filter { $0["kind"] == "created" }
        #expect(created.count == 2 && created.last?["sessionId"]?.stringValue != first, "\(created)")
        try await rig.stop()
    }

    @Test func `output arriving faster than it plays is cut, never queued without bound`() async throws {
        var settings = RealtimeTalkSession.Settings()
        settings.maxQueuedMs = 600
        let rig = try await Rig.start(speed: 1, relay: #"{"cmd": "talk-relay", "texts": ["x"], "audioPace": 0.05, "reply": "a long answer that takes a good few seconds to say out loud"}"#,
                                      settings: settings)
        try await rig.speak(amplitude: 3_000, frames: 50)
        try await rig.speak(amplitude: 0, frames: 45)   // the relay ends a turn on 800 ms of silence received
        #expect(await rig.log.waitFor { $0 == .error("the relay's audio came faster than it plays; the output is cut") })
        // The cancel is sent after that event: on a loaded machine the Gateway may not have it yet.
        #expect(try await rig.eventually { try await rig.relayLog().contains { $0["kind"] == "cancel" } }, "no cancel reached the Gateway")
        let cancel = try await rig.relayLog().first { $0["kind"] == "cancel" }
        #expect(cancel?["reason"] == "playback-overflow", "\(String(describing: cancel))")
        let played = await rig.speaker.playedSeconds
        #expect(played < 1.5, "\(played) s played of a reply cut at 0.6 s queued")
        try await rig.stop()
    }

    @Test func `no fifth append is in flight; audio beyond what the client holds is dropped and the loss reported`() async throws {
        // Answers held 2 s; the client holds 500 ms unanswered (5 appends of 100 ms): 4 on the wire, 1 waiting, then loss.
        let rig = try await Rig.start(relay: #"{"cmd": "talk-relay", "appendDelayMs": 2000}"#, maxUnansweredAudio: .milliseconds(500))
        try await rig.speak(amplitude: 0, frames: 60)
        #expect(await rig.log.waitFor { $0 == .microphone("input fell behind: audio dropped while the relay catches up") })
        let inFlight = try await offPool { try rig.gateway.control("relay-log") }["maxInFlight"]?.objectValue?.values.first?.intValue
        #expect(inFlight == 4)
        #expect(try await rig.relayLog().filter { $0["kind"] == "limit" }.isEmpty)
        try await rig.stop()
    }
}

extension RealtimeTalkSessionTests.Rig {
    func eventually(_ condition: @escaping @Sendable () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    func sessionId() async -> String? {
        let sessions = try? await offPool { try gateway.control("relay-sessions") }["sessions"]?.arrayValue
        return sessions?.first?["sessionId"]?.stringValue
    }
}
