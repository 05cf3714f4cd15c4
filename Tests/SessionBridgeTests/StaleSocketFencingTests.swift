import Foundation
import Synchronization
import TalkLogging
import Testing

@testable import SessionBridge

/// A socket that was already reading when the connection gave it up: its `receive()` does not honour
/// cancellation (as a socket's blocking read may not), so after `close()` it still hands out what arrives,
/// and ends only when the test makes it fail. Answers `connect` like a Gateway; its pings fail on demand.
private final class LingeringTransport: GatewayTransport {
    private enum Arrival { case frame([UInt8]), failure }

    private struct State {
        var queue: [Arrival] = []
        var reader: CheckedContinuation<Arrival, Never>?
        var isClosed = false
        var pingFails = false
    }

    private let state = Mutex(State())

    init() { deliver(FakeGateway.challenge()) }

    var isClosed: Bool { state.withLock { $0.isClosed } }

    func deliver(_ json: JSONValue) { arrive(.frame(Array(json.jsonText.utf8))) }
    /// An error arriving on the socket: `receive()` throws once the frames before it are read.
    func fail() { arrive(.failure) }
    func failPings() { state.withLock { $0.pingFails = true } }

    private func arrive(_ arrival: Arrival) {
        let reader = state.withLock { s -> CheckedContinuation<Arrival, Never>? in
            if let reader = s.reader {
                s.reader = nil
                return reader
            }
            s.queue.append(arrival)
            return nil
        }
        reader?.resume(returning: arrival)
    }

    func send(text: String) async throws {
        let sent = JSONValue.parse(Array(text.utf8)) ?? .null
        let id = sent["id"]?.stringValue ?? ""
        if sent["method"] == "connect" {
            deliver(FakeGateway.helloOk(id: id, tickMs: 60_000, deviceToken: "tok"))
        } else {
            deliver(["type": "res", "id": .string(id), "ok": true, "payload": ["echo": sent["method"] ?? .null]])
        }
    }

    func receive() async throws -> [UInt8] {
        let arrival = await withCheckedContinuation { (c: CheckedContinuation<Arrival, Never>) in
            let queued = state.withLock { s -> Arrival? in
                if s.queue.isEmpty {
                    s.reader = c
                    return nil
                }
                return s.queue.removeFirst()
            }
            if let queued { c.resume(returning: queued) }
        }
        guard case .frame(let bytes) = arrival else { throw MemoryTransportClosed() }
        return bytes
    }

    func ping() async throws {
        if state.withLock({ $0.pingFails }) { throw MemoryTransportClosed() }
    }

    func setMaxMessageSize(_ bytes: Int) async {}

    func close() async { state.withLock { $0.isClosed = true } }
}

/// Generation fencing in `GatewayConnection`: once a socket is given up, nothing that still arrives on
/// it (events, a shutdown notice, an error) reaches the layer above or changes the connection.
@Suite struct StaleSocketFencingTests {
    @Test func `frames and an error from a socket being replaced change nothing`() async throws {
        let sockets = Mutex<[LingeringTransport]>([])
        var deps = GatewayConnection.Dependencies(openTransport: {
            let socket = LingeringTransport()
            sockets.withLock { $0.append(socket) }
            return socket
        }) {
            .init(profile: .node(displayName: "t", version: "0.1.0"), auth: ConnectAuth(token: "secret-token"))
        }
        deps.random = { 0 }
        var timing = GatewayConnection.Timing()
        timing.backoff = Backoff(initial: 0.05, maximum: 0.4)
        timing.pingInterval = .milliseconds(100)
        let c = GatewayConnection(identity: ConnectHandshakeTests.identity, dependencies: deps, timing: timing,
                                  logger: Logger(label: "t", handler: InMemoryLogHandler()))
        let run = Task { await c.run() }
        defer { run.cancel() }
        try #require(await GatewayConnectionTests().waitFor(c, GatewayConnectionTests.isConnected) != nil)
        let events = await c.eventUpdates()
        let old = try #require(sockets.withLock { $0.first })

        // The socket's ping fails: the connection gives it up and closes it, while its reader is still reading.
        old.failPings()
        try #require(await Self.eventually { old.isClosed }, "the connection never gave up the socket")
        let states = await c.stateUpdates()
        old.deliver(["type": "event", "event": "presence", "payload": ["from": "stale"]])
        // Honoured, this would hold the reconnect back ten minutes.
        old.deliver(["type": "event", "event": "shutdown", "payload": ["reason": "restart", "restartExpectedMs": 600_000]])
        old.fail()

        // The connection drops the old socket and a new one takes over promptly.
        let reconnected = try? await withDeadline(.seconds(15), sleep: { try await Task.sleep(for: $0) }, onTimeout: {}) {
            var lost = false
            for await s in states {
                if !GatewayConnectionTests.isConnected(s) { lost = true } else if lost { return true }
            }
            return false
        }
        try #require(reconnected == true, "no reconnect within 15 s")
        let new = try #require(sockets.withLock { $0.count == 2 ? $0.last : nil })
        // An error and frames arriving later on the old socket do not touch the connection either.
        old.fail()
        old.deliver(["type": "event", "event": "presence", "payload": ["from": "stale-late"]])
        let reply = try await c.request(method: "status")
        #expect(reply?["echo"] == "status", "the first request on the new socket got \(String(describing: reply))")
        new.deliver(["type": "event", "event": "presence", "payload": ["from": "fresh"]])
        let first = try await withDeadline(.seconds(10), sleep: { try await Task.sleep(for: $0) }, onTimeout: {}) {
            var it = events.makeAsyncIterator()
            return await it.next()?.payload?["from"]?.stringValue
        }
        #expect(first == "fresh", "an event from the replaced socket reached the layer above")
        #expect(await c.state == .connected(serverVersion: "2026.5.1-ref"))
        #expect(sockets.withLock { $0.count } == 2)
    }

    /// Polls `condition` (bounded: 15 s) until it holds.
    private static func eventually(_ condition: @Sendable () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
