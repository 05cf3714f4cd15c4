import Foundation
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `TalkRelayClient` against the reference Gateway's relays: names by era, one session reused and
/// recreated, the in-flight and size limits, and hostile or stale events.
@Suite(.serialized) struct TalkRelayClientTests {
    /// goforward.raw (16 kHz PCM16) and a second of silence, as the relay's pcm16/16000 contract reads it.
    static func speechBytes() throws -> [UInt8] {
        let data = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/pocketsphinx/test/data/goforward.raw"))
        return [UInt8](data) + [UInt8](repeating: 0, count: 32_000)
    }

    static func start(_ extra: [String] = []) async throws -> (TalkGatewayHarness, TalkGatewayHarness.Connected) {
        let h = try await TalkGatewayHarness.start(extra)
        try await h.gateway.control(#"{"cmd": "talk-uplink", "transcription": "pcm16/16000", "realtime": "pcm16/16000"}"#)
        let op = try await h.connect(TalkGatewayHarness.operatorProfile)
        return (h, op)
    }

    /// Streams `bytes` (PCM16 at 16 kHz) in 100 ms appends faster than real time, waiting whenever the client
    /// holds all it may of unanswered audio (a file has no real time to keep; the microphone's audio would be
    /// dropped instead).
    static func stream(_ bytes: [UInt8], to client: TalkRelayClient) async throws {
        for start in stride(from: 0, to: bytes.count, by: 3_200) {
            let chunk = Array(bytes[start..<min(start + 3_200, bytes.count)])
            let deadline = ContinuousClock.now + .seconds(10)
            while case .fellBehind = await client.append(chunk, audioMs: chunk.count / 32) {
                guard ContinuousClock.now < deadline else {
                    Issue.record("the relay answered no append for 10 s")
                    return
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Events until `done` holds (or nil after `timeout`).
    static func collect(_ events: AsyncStream<TalkRelayEvent>, timeout: Duration = .seconds(15),
                        until done: @escaping @Sendable (TalkRelayEvent) -> Bool) async -> [TalkRelayEvent]? {
        await withTaskGroup(of: [TalkRelayEvent]?.self) { group in
            group.addTask {
                var seen: [TalkRelayEvent] = []
                for await event in events {
                    seen.append(event)
                    if done(event) { return seen }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    static func isFinal(_ text: String) -> @Sendable (TalkRelayEvent) -> Bool {
        { if case .transcript(_, text, true) = $0.kind { true } else { false } }
    }

    @Test func `names follow hello-ok: unified, transitional and legacy eras`() {
        let unified = ["talk.catalog", "talk.session.create", "talk.session.appendAudio", "talk.session.close",
                       "talk.session.cancelOutput", "talk.session.acknowledgeMark", "talk.session.submitToolResult", "talk.client.toolCall"]
        let legacy = ["talk.realtime.session", "talk.realtime.relayAudio", "talk.realtime.relayMark",
                      "talk.realtime.relayStop", "talk.realtime.relayToolResult"]
        let realtime = TalkRelayNames.resolve(mode: .realtime, methods: unified)
        #expect(realtime?.append == "talk.session.appendAudio" && realtime?.sessionKey == "sessionId" && realtime?.event == "talk.event")
        #expect(TalkRelayNames.resolve(mode: .realtime, methods: legacy + unified)?.era == .unified)
        let old = TalkRelayNames.resolve(mode: .realtime, methods: legacy)
        #expect(old?.append == "talk.realtime.relayAudio" && old?.sessionKey == "relaySessionId" && old?.close == "talk.realtime.relayStop")
        #expect(old?.cancelOutput == nil && old?.toolCall == nil)
        #expect(TalkRelayNames.resolve(mode: .transcription, methods: legacy) == nil)
        #expect(TalkRelayNames.resolve(mode: .transcription, methods: ["talk.transcription.session", "talk.transcription.relayAudio"])?
            .sessionKey == "transcriptionSessionId")
        #expect(TalkRelayNames.resolve(mode: .transcription, methods: ["talk.speak"]) == nil)
    }

    @Test func `a transcription session streams an utterance and gets its final, then the session is reused`() async throws {
        let (h, op) = try await Self.start()
        defer { op.stop() }
        try await h.gateway.control(#"{"cmd": "talk-relay", "texts": ["go forward ten meters", "and again"]}"#)
        let client = TalkRelayClient(gateway: op.connection, mode: .transcription, logger: h.logger)
        _ = try await client.availability()
        let events = await client.events()
        let session = try await client.ensureSession()
        #expect(session.inputEncoding == "pcm16" && session.inputSampleRateHz == 16_000)
        try await Self.stream(try Self.speechBytes(), to: client)
        let first = try #require(await Self.collect(events, until: Self.isFinal("go forward ten meters")))
        #expect(first.contains { $0.kind == .ready })
        #expect(first.contains { if case .partial = $0.kind { true } else { false } })
        #expect(first.allSatisfy { $0.sessionId == session.id })
        #expect(try await client.ensureSession() == session)
        try await Self.stream(try Self.speechBytes(), to: client)
        #expect(await Self.collect(events, until: Self.isFinal("and again")) != nil)
        #expect(await client.statistics.sessionsCreated == 1)
        await client.close()
        let log = try await h.gateway.control("relay-log")["log"]?.arrayValue ?? []
        #expect(log.contains { $0["kind"] == "closed" && $0["sessionId"]?.stringValue == session.id }, "not closed: \(log)")
        try h.gateway.expectNoViolations()
    }

    @Test func `a session is recreated after an expiry and after a reconnect`() async throws {
        let (h, op) = try await Self.start()
        defer { op.stop() }
        let client = TalkRelayClient(gateway: op.connection, mode: .transcription, logger: h.logger)
        let events = await client.events()
        let first = try await client.ensureSession()
        try await h.gateway.control("relay-expire")
        // The client makes a new session only once it has heard of the expiry.
        try #require(await Self.collect(events) { $0.kind == .closed(reason: "completed") } != nil, "the expiry's close never came")
        let second = try await client.ensureSession()
        #expect(second.id != first.id)
        try await h.gateway.control("drop")
        let reconnected = try await h.eventually {
            guard let hello = await op.connection.hello else { return false }
            return hello.connId != second.connId
        }
        #expect(reconnected)
        let third = try await client.ensureSession()
        #expect(third.id != second.id && third.connId != second.connId)
        #expect(await client.statistics.sessionsCreated == 3)
        try h.gateway.expectNoViolations()
    }

    @Test func `audio beyond five seconds unanswered is dropped and reported, never a fifth append in flight`() async throws {
        let (h, op) = try await Self.start()
        defer { op.stop() }
        // Answers held 5 s (under the client's 8 s append timeout): a Gateway stuck for longer than it may lag.
        try await h.gateway.control(#"{"cmd": "talk-relay", "appendDelayMs": 5000}"#)
        let client = TalkRelayClient(gateway: op.connection, mode: .transcription, logger: h.logger)
        _ = try await client.ensureSession()
        let outcomes = await Self.burst([UInt8](repeating: 0, count: 8 * 32_000), to: client)   // 8 s in 100 ms appends
        #expect(outcomes.prefix(50).allSatisfy { $0 == .sent(requests: 1) }, "the first 5 s are kept: \(outcomes)")
        #expect(outcomes.dropFirst(50).allSatisfy { $0 == .fellBehind }, "what comes beyond 5 s is dropped: \(outcomes)")
        #expect(h.logged(atLeast: .warning).contains { $0.contains("input fell behind") })
        #expect(await client.statistics.appendsDropped == 30)
        let resumed = try await h.eventually(timeout: .seconds(30)) {
            await client.append([UInt8](repeating: 0, count: 3_200), audioMs: 100) != .fellBehind
        }
        #expect(resumed, "answers came back, so sending resumes")
        // The burst went out merged while the first appends waited: never more than four at once.
        let seen = try await Self.maxInFlightAtGateway(h, client)
        #expect(seen.map { (1...4).contains($0) } ?? false, "the Gateway had \(String(describing: seen)) appends in flight at once")
        #expect(await client.statistics.maxInFlight <= 4)
        try h.gateway.expectNoViolations()
    }

    /// The most appends the Gateway had unanswered at once, over all `client` sent: read after the client's close,
    /// which writes the queued audio first; the Gateway takes a socket's frames in order, so once it has answered
    /// the close it has counted every append (`append` only queues: read before, the count misses what is still
    /// on its way, or is nil when none has arrived yet).
    static func maxInFlightAtGateway(_ h: TalkGatewayHarness, _ client: TalkRelayClient) async throws -> Int64? {
        await client.close()
        return try await h.gateway.control("relay-log")["maxInFlight"]?.objectValue?.values.first?.intValue
    }

    /// `bytes` of PCM16 at 16 kHz in 100 ms appends, all at once (a burst, as after a stall of the machine).
    static func burst(_ bytes: [UInt8], to client: TalkRelayClient) async -> [TalkRelayClient.AppendOutcome] {
        var outcomes: [TalkRelayClient.AppendOutcome] = []
        for start in stride(from: 0, to: bytes.count, by: 3_200) {
            let chunk = Array(bytes[start..<min(start + 3_200, bytes.count)])
            outcomes.append(await client.append(chunk, audioMs: chunk.count / 32))
        }
        return outcomes
    }

    @Test func `a Gateway that answers appends slowly still gets the whole utterance, never five appends at once`() async throws {
        let (h, op) = try await Self.start()
        defer { op.stop() }
        // Each answer held a second: the microphone's 100 ms appends come ten times faster than the answers.
        try await h.gateway.control(#"{"cmd": "talk-relay", "appendDelayMs": 1000, "texts": ["slow but alive"]}"#)
        let client = TalkRelayClient(gateway: op.connection, mode: .transcription, logger: h.logger)
        let events = await client.events()
        _ = try await client.ensureSession()
        let speech = try Self.speechBytes()   // 3.8 s: under the 5 s the client holds for a slow Gateway
        let outcomes = await Self.burst(speech, to: client)
        #expect(!outcomes.contains(.fellBehind), "audio was dropped: \(outcomes)")
        #expect(!h.logged(atLeast: .warning).contains { $0.contains("input fell behind") })
        #expect(await Self.collect(events, timeout: .seconds(30), until: Self.isFinal("slow but alive")) != nil,
                "the relay's final never came")
        let turns = try await h.gateway.control("relay-turns")["turns"]?.arrayValue ?? []
        // The turn ends within the second of silence after the speech: all of the speech is in it.
        let received = turns.reduce(0) { $0 + ($1["bytes"]?.intValue ?? 0) }
        let spoken = Int64(speech.count - 32_000)
        #expect(received >= spoken, "the Gateway's turns hold \(received) bytes of the \(spoken) spoken: \(turns)")
        let seen = try await Self.maxInFlightAtGateway(h, client)
        #expect(seen.map { $0 <= 4 } ?? false, "the Gateway had \(String(describing: seen)) appends in flight at once")
        try h.gateway.expectNoViolations()
    }

    /// A PCM16 WAV as the reference Gateway writes it (44-byte header): its samples.
    static func wavSamples(_ path: String) throws -> [Int16] {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return stride(from: 44, to: data.count - 1, by: 2).map { Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8) }
    }

    @Test func `many small appends reach the Gateway in capture order, none lost or doubled`() async throws {
        let (h, op) = try await Self.start()
        defer { op.stop() }
        try await h.gateway.control(#"{"cmd": "talk-relay", "texts": ["in order"]}"#)
        let client = TalkRelayClient(gateway: op.connection, mode: .transcription, logger: h.logger)
        let events = await client.events()
        _ = try await client.ensureSession()
        // 400 appends of 20 ms (the Gateway's speech window), each a level of its own (all loud enough to be
        // speech), sent as fast as the four-in-flight limit lets them: the level says which append it is.
        let count = 400
        let level = { (i: Int) -> Int16 in Int16(1_000 + i * 75) }
        for i in 0..<count {
            let samples = [Int16](repeating: level(i), count: 320)
            let bytes = samples.flatMap { sample -> [UInt8] in
                let u = UInt16(bitPattern: sample)
                return [UInt8(truncatingIfNeeded: u), UInt8(u >> 8)]
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while case .fellBehind = await client.append(bytes, audioMs: 20) {
                guard ContinuousClock.now < deadline else { Issue.record("the relay answered no append for 10 s"); return }
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        // Then silence, as a microphone goes on: the relay ends a turn on 800 ms of silence it received.
        for _ in 0..<40 {
            while case .fellBehind = await client.append([UInt8](repeating: 0, count: 640), audioMs: 20) { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(await Self.collect(events, until: Self.isFinal("in order")) != nil)
        #expect(await client.statistics.maxInFlight > 1, "the appends overlapped (more than one unanswered at once)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relay-order-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let turns = try await h.gateway.control(JSONValue.object(["cmd": "relay-turns", "dump": .string(folder)]).jsonText)["turns"]?.arrayValue ?? []
        let turn = try #require(turns.first, "the Gateway kept no turn")
        // What waited while four appends were unanswered went out merged: as many appends as the client wrote.
        let written = await client.statistics.appendsSent
        #expect(turns.count == 1 && turn["appends"]?.intValue == Int64(written), "\(written) appends written: \(turns)")
        #expect(turn["bytes"]?.intValue == Int64(count * 640 + 40 * 640), "\(turns)")
        let samples = try Self.wavSamples(try #require(turn["wav"]?.stringValue))
        // The levels in the order the Gateway decoded them, one per run of equal samples.
        var received: [Int16] = []
        for sample in samples where received.last != sample { received.append(sample) }
        if received.last == 0 { received.removeLast() }   // the silence that ended the turn
        let expected = (0..<count).map(level)
        let firstOutOfOrder = zip(received, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(received == expected, "\(received.count) appends received; the first out of order at \(String(describing: firstOutOfOrder))")
        try h.gateway.expectNoViolations()
    }

    @Test func `audio over 512 KiB of base64 goes out in several appends`() async throws {
        let (h, op) = try await Self.start()
        defer { op.stop() }
        let client = TalkRelayClient(gateway: op.connection, mode: .transcription, logger: h.logger)
        let events = await client.events()
        _ = try await client.ensureSession()
        try await h.gateway.control(#"{"cmd": "talk-relay", "texts": ["long"]}"#)
        let speech = try Self.speechBytes()
        var big: [UInt8] = []
        while big.count < 900_000 { big += speech }
        #expect(await client.append(big, audioMs: big.count / 32) == .sent(requests: 3))
        #expect(await Self.collect(events, until: Self.isFinal("long")) != nil)
        await client.close()   // then the Gateway has taken every append (see `maxInFlightAtGateway`)
        let log = try await h.gateway.control("relay-log")["log"]?.arrayValue ?? []
        #expect(!log.contains { $0["kind"] == "limit" }, "\(log)")
        let turns = try await h.gateway.control("relay-turns")["turns"]?.arrayValue ?? []
        #expect(turns.allSatisfy { ($0["maxAppendBase64"]?.intValue ?? .max) <= 512 * 1024 })
        try h.gateway.expectNoViolations()
    }

    @Test func `malformed and stale relay events are logged and dropped, never a crash`() async throws {
        let (h, op) = try await Self.start()
        defer { op.stop() }
        try await h.gateway.control(#"{"cmd": "talk-relay", "texts": ["still fine"]}"#)
        let client = TalkRelayClient(gateway: op.connection, mode: .transcription, logger: h.logger)
        let events = await client.events()
        let session = try await client.ensureSession()
        let hostile = [
            #"{"type":"event","event":"talk.event","payload":"not an object"}"#,
            #"{"type":"event","event":"talk.event","payload":{"type":"transcript","text":"x","final":true}}"#,
            #"{"type":"event","event":"talk.event","payload":{"transcriptionSessionId":"\#(session.id)","type":"transcript","text":7,"final":true}}"#,
            #"{"type":"event","event":"talk.event","payload":{"transcriptionSessionId":"\#(session.id)","type":"audio","audioBase64":"%%%"}}"#,
            #"{"type":"event","event":"talk.event","payload":{"transcriptionSessionId":"old-session","type":"transcript","text":"stale words","final":true}}"#,
        ]
        for text in hostile {
            let line = JSONValue.object(["cmd": "send-raw", "text": .string(text)]).jsonText
            try await h.gateway.control(line)
        }
        try await Self.stream(try Self.speechBytes(), to: client)
        let seen = try #require(await Self.collect(events, until: Self.isFinal("still fine")))
        #expect(!seen.contains { if case .transcript(_, "stale words", _) = $0.kind { true } else { false } })
        let stats = await client.statistics
        #expect(stats.malformedEvents == 4 && stats.staleEvents >= 1, "\(stats)")
        #expect(h.logged(atLeast: .warning).filter { $0.contains("relay event dropped") }.count == 4)
        try h.gateway.expectNoViolations()
    }

    @Test func `a catalog without ready leaves readiness unverified: the relay is tried; only ready false keeps it unused`() async throws {
        let (h, op) = try await Self.start()
        defer { op.stop() }
        try await h.gateway.control(#"{"cmd": "talk-relay", "catalogOmitsReady": true, "texts": ["tried anyway"]}"#)
        let client = TalkRelayClient(gateway: op.connection, mode: .transcription, logger: h.logger)
        let names = try await client.availability()
        #expect(names.create == "talk.session.create")
        let events = await client.events()
        _ = try await client.ensureSession()
        try await Self.stream(try Self.speechBytes(), to: client)
        #expect(await Self.collect(events, until: Self.isFinal("tried anyway")) != nil)
        try await h.gateway.control(#"{"cmd": "talk-relay", "catalogOmitsReady": false, "ready": false}"#)
        await #expect(throws: TalkRelayError.notReady(.transcription)) { _ = try await client.availability() }
        try h.gateway.expectNoViolations()
    }

    @Test func `a legacy Gateway is spoken to in its own names`() async throws {
        let (h, op) = try await Self.start(["--talk-era", "legacy"])
        defer { op.stop() }
        try await h.gateway.control(#"{"cmd": "talk-relay", "texts": ["old words"], "audioPace": 0.05}"#)
        let transcription = TalkRelayClient(gateway: op.connection, mode: .transcription, logger: h.logger)
        await #expect(throws: TalkRelayError.notListed(.transcription)) { _ = try await transcription.availability() }
        let client = TalkRelayClient(gateway: op.connection, mode: .realtime, logger: h.logger)
        let events = await client.events()
        let session = try await client.ensureSession()
        #expect(session.names.era == .legacy)
        try await Self.stream(try Self.speechBytes(), to: client)
        let seen = try #require(await Self.collect(events) { if case .mark = $0.kind { true } else { false } })
        #expect(seen.contains { if case .transcript("user", "old words", true) = $0.kind { true } else { false } })
        #expect(seen.contains { if case .audio = $0.kind { true } else { false } })
        guard case .mark(let name)? = seen.last?.kind else { Issue.record("no mark: \(seen)"); return }
        try await client.acknowledgeMark(name)
        await client.close()
        let log = try await h.gateway.control("relay-log")["log"]?.arrayValue ?? []
        #expect(log.contains { $0["kind"] == "mark-ack" && $0["markName"]?.stringValue == name && $0["outstanding"] == true }, "\(log)")
        try h.gateway.expectNoViolations()
    }
}
