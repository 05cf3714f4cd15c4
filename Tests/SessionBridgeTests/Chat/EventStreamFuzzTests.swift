import Foundation
import Synchronization
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge

/// A Gateway socket that answers `chat.send` with a run id and hands the client whatever events the test pushes.
actor ChatEventGateway: GatewayCalling {
    nonisolated let events: AsyncStream<GatewayFrame.Event>
    private nonisolated let feed: AsyncStream<GatewayFrame.Event>.Continuation
    private var runs = 0

    init() { (events, feed) = AsyncStream.makeStream(of: GatewayFrame.Event.self) }

    func request(method: String, params: JSONValue?, timeout: Duration?) async throws(GatewayRequestError) -> JSONValue? {
        try await request(method: method, params: params, timeout: timeout, written: {})
    }

    func request(method: String, params: JSONValue?, timeout: Duration?,
                 written: @escaping @Sendable () -> Void) async throws(GatewayRequestError) -> JSONValue? {
        written()
        switch method {
        case "chat.send":
            runs += 1
            return ["runId": .string("run-\(runs)"), "status": "started"]
        case "chat.history": return ["messages": []]
        default: return [:]
        }
    }

    var hello: HelloOk? { nil }
    nonisolated func eventUpdates() -> AsyncStream<GatewayFrame.Event> { events }
    nonisolated func stateUpdates() -> AsyncStream<ConnectionState> {
        AsyncStream { $0.yield(.connected(serverVersion: "test")) }
    }
    nonisolated func push(_ payload: JSONValue) { feed.yield(GatewayFrame.Event(name: "chat", payload: payload)) }
    nonisolated func finish() { feed.finish() }
}

/// Hostile chat and relay event streams: thousands of forged, retyped, reordered and oversized events for the runs a
/// reply follows, and for the relay. No crash, every reply still ends, its text stays bounded, memory does not grow.
@Suite(.serialized) struct EventStreamFuzzTests {
    static let logger = Logger(label: "fuzz", handler: InMemoryLogHandler())

    /// The events of one run: deltas, snapshots, a final; each then possibly mutated.
    static func chatEvents(run: String, count: Int, _ rng: inout SplitMix64) -> [JSONValue] {
        var out: [JSONValue] = []
        let big = String(repeating: "word ", count: ChatEventPayload.maxTextBytes / 5)  // a whole 256 KiB delta
        for seq in 0..<count {
            var event: JSONValue = ["runId": .string(run), "sessionKey": "main", "seq": .int(Int64(seq)), "state": "delta"]
            switch rng.next() % 8 {
            case 0: event = ["runId": .string(run), "sessionKey": "main", "seq": .int(Int64(seq)), "state": "delta", "deltaText": .string(big)]
            case 1: event = ["runId": .string(run), "sessionKey": "main", "seq": .int(Int64(seq)), "state": "delta",
                             "message": ["role": "assistant", "content": [["type": "text", "text": .string(String(big.prefix(Int(rng.next() % 200_000))))]]]]
            case 2: event = Mutate.retype(event, &rng)
            case 3: event = ["runId": .string(run), "sessionKey": "main", "seq": .int(Int64(bitPattern: rng.next())), "state": "delta", "deltaText": "x"]
            case 4: event = ["runId": .string(run), "sessionKey": "main", "seq": .int(Int64(seq)), "state": "delta", "deltaText": "\u{1B}]0;t\u{7}\n<0>", "replace": .bool(rng.next() % 2 == 0)]
            case 5: event = .string(String(decoding: Mutate.bytes(Array(event.jsonText.utf8), &rng), as: UTF8.self))
            default: event = ["runId": .string(run), "sessionKey": "main", "seq": .int(Int64(seq)), "state": "delta", "deltaText": .string("more words \(seq). ")]
            }
            out.append(event)
        }
        return out
    }

    @Test func `hostile chat event streams end every reply with bounded text and memory`() async throws {
        var rng = SplitMix64(state: 0xC4A7)
        let gateway = ChatEventGateway()
        let client = ChatClient(connection: gateway, outbox: ChatOutbox(file: nil, logger: Self.logger), logger: Self.logger)
        let running = Task { await client.run() }
        defer { running.cancel(); gateway.finish() }
        // Memory is measured from the end of the third round, once the allocator holds its working set: a leak grows
        // with each round after it.
        var steady = 0
        var cases = 0
        var longest = 0
        for round in 1...12 {
            if round == 4 { steady = residentKiB() }
            let reply = await client.send("turn \(round)")
            var updates = reply.makeAsyncIterator()
            guard case .accepted(let run?, _)? = await updates.next() else { Issue.record("no ack in round \(round)"); continue }
            // Pushed all at once, while the reply is read.
            let events = Self.chatEvents(run: run, count: 400, &rng)
            cases += events.count
            for event in events { gateway.push(event) }
            gateway.push(["runId": .string(run), "sessionKey": "main", "seq": .int(Int64.max), "state": "final"])
            var ended = false
            while let update = await updates.next() {
                switch update {
                case .partial(let text, _):
                    longest = max(longest, text.utf8.count)
                case .final(let text, _), .aborted(let text):
                    longest = max(longest, text.utf8.count)
                    ended = true
                default: ended = update.isTerminal
                }
            }
            #expect(ended, "round \(round): the reply never ended")
        }
        let grown = residentKiB() - steady
        print("chat event stream fuzz: \(cases) events in 12 replies, 0 crashes, longest reply text \(longest) bytes, "
              + "resident growth over the last 9 replies \(grown / 1024) MiB (at \(steady / 1024) MiB after 3)")
        #expect(longest <= ChatEventPayload.maxTextBytes, "a reply grew to \(longest) bytes")
        #expect(grown < 50_000, "resident size grew by \(grown / 1024) MiB over 9 replies")
    }

    @Test func `hostile relay event payloads are parsed or refused, never a crash`() async {
        var rng = SplitMix64(state: 0x7E1A)
        let valid: [JSONValue] = [
            ["relaySessionId": "s", "type": "ready"], ["relaySessionId": "s", "type": "partial", "text": "hello"],
            ["transcriptionSessionId": "s", "type": "transcript", "role": "user", "text": "hi", "final": true],
            ["relaySessionId": "s", "type": "audio", "audioBase64": "AAAA", "itemId": "i"], ["relaySessionId": "s", "type": "mark", "markName": "m"],
            ["relaySessionId": "s", "type": "toolCall", "callId": "c", "name": "n", "args": ["a": 1]],
            ["relaySessionId": "s", "type": "inputAudio", "byteLength": .int(Int64.max)], ["relaySessionId": "s", "type": "close", "reason": "x"],
            ["type": "speechStart", "talkEvent": ["sessionId": "s", "type": "speechStart", "turnId": "t"]],
        ]
        var parsed = 0
        var refused = 0
        let before = residentKiB()
        for i in 0..<20_000 {
            if i % 64 == 0 { await Task.yield() }
            let base = valid[i % valid.count]
            let payload: JSONValue? = switch i % 3 {
            case 0: Mutate.retype(base, &rng)
            case 1: JSONValue.parse(Mutate.bytes(Array(base.jsonText.utf8), &rng))
            default: base
            }
            do {
                _ = try TalkRelayEvent.parse(payload)
                parsed += 1
            } catch {
                refused += 1
                #expect(!error.description.isEmpty)
            }
        }
        print("relay event fuzz: 20000 payloads, \(parsed) parsed, \(refused) refused, 0 crashes, resident growth \((residentKiB() - before) / 1024) MiB")
        #expect(parsed > 6000 && refused > 1000)
        #expect(residentKiB() - before < 50_000)
    }
}
