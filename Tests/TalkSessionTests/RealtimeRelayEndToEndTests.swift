import AudioIO
import Foundation
import SessionBridge
import TalkBench
import TalkLogging
import TalkTestSupport
import Testing

@testable import TalkSession

/// `RealtimeTalkSession` through the real `TalkRelayClient` against the reference Gateway's realtime relay, end to
/// end: the microphone's speech is transcribed, answered in audio, and the answer's mark acknowledged only after its
/// audio played. The loop's own behaviour is tested on a scripted relay (`RealtimeTalkSessionTests`).
@Suite(.serialized) struct RealtimeRelayEndToEndTests {
    static let token = "realtime-test-token"

    @Test func `a turn is answered in audio and its mark is acknowledged after playback`() async throws {
        let gateway = try await offPool {
            try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot,
                                        arguments: ["--token", Self.token, "--auto-approve", "--realtime-uplink", "pcm16/16000"])
        }
        defer { gateway.stop() }
        _ = try await offPool { try gateway.control(#"{"cmd": "talk-relay", "texts": ["hello there"], "audioPace": 0.3}"#) }
        let logger = Logger(label: "realtime-test", handler: InMemoryLogHandler())
        let connection = try gateway.connection(
            token: Self.token, profile: .operator(scopes: ["operator.read", "operator.write", "operator.talk"], displayName: "rt", version: "0.1.0-test"),
            logger: logger)
        let run = Task { await connection.run() }
        defer { run.cancel() }
        var settings = TalkRelayClient.Settings()
        settings.sessionKey = "agent:main:main"
        let client = TalkRelayClient(gateway: connection, mode: .realtime, settings: settings, logger: logger)
        let mic = FakeMicrophone()
        let speaker = PacedSpeaker(speed: 1)
        let session = RealtimeTalkSession(capture: mic, playback: speaker, relay: client, logger: logger)
        let log = EventLog()
        Task { for await event in session.events { await log.append(event) } }
        let deadline = ContinuousClock.now + .seconds(15)
        while await connection.hello == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        try await session.start()

        for amplitude: Int16 in [3_000, 0] {   // a second of sound, then the 800 ms of silence that end the relay's turn
            for _ in 0..<(amplitude == 0 ? 40 : 50) {
                await mic.push(amplitude: amplitude, count: 1)
                try await Task.sleep(for: .milliseconds(20))   // the microphone's pace
            }
        }
        #expect(await log.waitFor { if case .finalTranscript("hello there", "gateway-realtime", _, _, _) = $0 { true } else { false } })
        #expect(await log.waitFor { if case .replyFinal("you said hello there") = $0 { true } else { false } })
        #expect(await log.waitFor { $0 == .relayNote("mark reply-end acknowledged") })
        let relayLog = try await offPool { try gateway.control("relay-log") }["log"]?.arrayValue ?? []
        let acked = relayLog.first { $0["kind"] == "mark-ack" }
        let answered = relayLog.first { $0["kind"] == "answered" }
        #expect(acked?["markName"] == "reply-end")
        // Acknowledged only once the audio before it had played: all of it reached the speaker first.
        let bytes = Double(answered?["audioBytes"]?.intValue ?? 0)
        let played = await speaker.playedSeconds
        #expect(abs(played - bytes / 48_000) < 0.05, "played \(played) s of \(bytes / 48_000) s")
        let finished = try #require(await speaker.lastFinished)
        let ackedAt = Date(timeIntervalSince1970: Double(acked?["ts"]?.intValue ?? 0) / 1000)
        #expect(ackedAt.timeIntervalSince(finished) > -0.05, "the mark was acknowledged \(finished.timeIntervalSince(ackedAt)) s before playback ended")
        #expect(await log.states.contains(.speaking))
        await session.stop()
        try TestInput.requireSchemaCheck(reportedByGateway: gateway.startup.schema, "the schema check of the frames sent")
        let violations = try await offPool { try gateway.control("violations") }
        #expect(violations["count"] == 0, "schema violations: \(violations)")
    }
}
