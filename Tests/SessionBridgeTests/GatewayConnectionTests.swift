import Foundation
import Synchronization
import TalkLogging
import Testing

@testable import SessionBridge

/// An in-process Gateway behind `MemoryTransport`s: answers connect, ticks on demand, records sockets.
final class ScriptedGateway: Sendable {
    struct Script: Sendable {
        /// Ticks are never sent, so the tick watchdog drops the socket after 2 x `tickMs` without a frame:
        /// long by default, short only where the watchdog is under test.
        var tickMs: Int64 = 30_000
        var rejectV3 = false
        var refusals: [JSONValue] = []   // error details to answer connect with, one per attempt
        var answerRequests = true
    }

    let script: Mutex<Script>
    let sockets = Mutex<[MemoryTransport]>([])
    let connects = Mutex<[JSONValue]>([])

    init(_ script: Script = Script()) { self.script = Mutex(script) }

    var latest: MemoryTransport? { sockets.withLock { $0.last } }

    func open() -> MemoryTransport {
        let t = MemoryTransport { [self] sent, t in
            let id = sent["id"]?.stringValue ?? ""
            if sent["method"] == "connect" {
                connects.withLock { $0.append(sent) }
                let s = script.withLock { s -> (Script, JSONValue?) in
                    let refusal = s.refusals.isEmpty ? nil : s.refusals.removeFirst()
                    return (s, refusal)
                }
                if let details = s.1 {
                    t.deliver(["type": "res", "id": .string(id), "ok": false,
                               "error": ["code": "NOT_PAIRED", "message": "no", "details": details]])
                    return
                }
                if s.0.rejectV3, FakeGateway.verify(sent) == "v3" {
                    t.deliver(FakeGateway.error(id: id, code: "DEVICE_AUTH_SIGNATURE_INVALID"))
                    return
                }
                t.deliver(FakeGateway.helloOk(id: id, tickMs: s.0.tickMs, deviceToken: "tok"))
            } else if script.withLock({ $0.answerRequests }) {
                t.deliver(["type": "res", "id": .string(id), "ok": true, "payload": ["echo": sent["method"] ?? .null]])
            }
        }
        t.deliver(FakeGateway.challenge())
        sockets.withLock { $0.append(t) }
        return t
    }
}

@Suite struct GatewayConnectionTests {
    let identity = ConnectHandshakeTests.identity

    func connection(_ gateway: ScriptedGateway, logs: InMemoryLogHandler.Store = .init()) -> GatewayConnection {
        var deps = GatewayConnection.Dependencies(openTransport: { gateway.open() }) {
            GatewayConnection.ConnectMaterial(profile: .node(displayName: "t", version: "0.1.0"), auth: ConnectAuth(token: "secret-token"))
        }
        deps.random = { 0 }
        var timing = GatewayConnection.Timing()
        timing.backoff = Backoff(initial: 0.05, maximum: 0.4)
        // Requests that should be answered get a generous limit; the timeout test sets its own short one.
        timing.requestTimeout = .seconds(10)
        return GatewayConnection(identity: identity, dependencies: deps, timing: timing,
                                 logger: Logger(label: "t", handler: InMemoryLogHandler(store: logs)))
    }

    /// Waits (bounded) until the connection reports a state matching `predicate`.
    func waitFor(_ c: GatewayConnection, within seconds: Double = 15, _ predicate: @escaping @Sendable (ConnectionState) -> Bool) async -> ConnectionState? {
        let updates = await c.stateUpdates()
        return try? await withDeadline(.milliseconds(Int(seconds * 1000)), sleep: { try await Task.sleep(for: $0) }, onTimeout: {}) {
            for await s in updates where predicate(s) { return ConnectionState?.some(s) }
            return ConnectionState?.none  // the connection stopped without ever matching
        } ?? nil
    }

    static func isConnected(_ s: ConnectionState) -> Bool { if case .connected = s { true } else { false } }

    @Test func `requests are answered and events reach the layer above`() async throws {
        let gw = ScriptedGateway()
        let c = connection(gw)
        let run = Task { await c.run() }
        defer { run.cancel() }
        #expect(await waitFor(c, Self.isConnected) == .connected(serverVersion: "2026.5.1-ref"))
        let events = await c.eventUpdates()
        let reply = try await c.request(method: "status")
        #expect(reply?["echo"] == "status")
        gw.latest?.deliver(["type": "event", "event": "presence", "payload": ["n": 1]])
        gw.latest?.deliver(["type": "event", "event": "tick", "payload": ["ts": 1]])
        let first = try await withDeadline(.seconds(10), sleep: { try await Task.sleep(for: $0) }, onTimeout: {}) {
            var it = events.makeAsyncIterator()
            return await it.next()?.name
        }
        #expect(first == "presence")
    }

    @Test func `a request in flight fails promptly and retryably when the socket dies`() async throws {
        let gw = ScriptedGateway(.init(tickMs: 10_000, answerRequests: false))
        let c = connection(gw)
        let run = Task { await c.run() }
        defer { run.cancel() }
        try #require(await waitFor(c, Self.isConnected) != nil)
        let start = ContinuousClock.now
        // The request's own timeout is a minute: failing well before it means the lost socket failed it.
        async let reply: JSONValue? = c.request(method: "chat.send", timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(50))
        await gw.latest?.close()
        do {
            _ = try await reply
            Issue.record("expected the request to fail")
        } catch let error as GatewayRequestError {
            #expect(error == .connectionLost(method: "chat.send"))
            #expect(error.isRetryable)
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(ContinuousClock.now - start < .seconds(20))
        // ...and the connection comes back by itself, on a second socket. The failed request can reach us while the
        // state still reads the lost socket's `.connected`, so the wait is for a connected state on a new socket.
        #expect(await waitFor(c) { Self.isConnected($0) && gw.sockets.withLock { $0.count } >= 2 } != nil)
    }

    @Test func `an unanswered request times out`() async throws {
        let gw = ScriptedGateway(.init(tickMs: 10_000, answerRequests: false))
        let c = connection(gw)
        let run = Task { await c.run() }
        defer { run.cancel() }
        try #require(await waitFor(c, Self.isConnected) != nil)
        await #expect(throws: GatewayRequestError.timedOut(method: "x", seconds: 0.3)) {
            _ = try await c.request(method: "x", timeout: .milliseconds(300))
        }
    }

    @Test func `not connected means the request is refused at once`() async {
        let c = connection(ScriptedGateway())
        await #expect(throws: GatewayRequestError.notConnected) { _ = try await c.request(method: "x") }
    }

    @Test func `a silent Gateway is detected by the tick watchdog and reconnected`() async throws {
        let gw = ScriptedGateway(.init(tickMs: 100))
        let c = connection(gw)
        let run = Task { await c.run() }
        defer { run.cancel() }
        try #require(await waitFor(c, Self.isConnected) != nil)
        let start = ContinuousClock.now
        // No ticks are ever sent: within 2 x 100 ms (+ check interval + backoff) the socket is declared dead.
        let s = await waitFor(c) { if case .reconnecting = $0 { true } else { false } }
        #expect(s != nil)
        // About 300 ms is expected. The bound only catches a watchdog that waits a hundred ticks, or a fixed
        // timeout of its own (the client's request timeout is 30 s); a loaded machine has been seen to add
        // seconds (5.97 s in one CI run beside 8 other suites), so it is not tighter.
        #expect(ContinuousClock.now - start < .seconds(10))
        #expect(await gw.sockets.withLock { $0.first }?.isClosed == true)
    }

    @Test func `a Gateway that rejects v3 proofs gets one v2 retry, logged`() async throws {
        let gw = ScriptedGateway(.init(tickMs: 10_000, rejectV3: true))
        let logs = InMemoryLogHandler.Store()
        let c = connection(gw, logs: logs)
        let run = Task { await c.run() }
        defer { run.cancel() }
        #expect(await waitFor(c, Self.isConnected) != nil)
        let versions = gw.connects.withLock { $0.map { FakeGateway.verify($0) ?? "bad" } }
        #expect(versions == ["v3", "v2"])
        let downgrades = logs.events.filter { $0.level == .warning && "\($0.message)".contains("v2") }
        #expect(downgrades.count == 1, "logs: \(logs.text)")
    }

    @Test func `the signature format drops to v2 only on a refused signature, and only once per connection`() {
        var machine = GatewayConnection.StateMachine()
        for other in ["DEVICE_AUTH_INVALID", "DEVICE_AUTH_NONCE_MISMATCH", "AUTH_TOKEN_MISMATCH", "DEVICE_AUTH_SIGNATURE_EXPIRED"] {
            _ = machine.connectFailed(.rejected(GatewayErrorShape(code: "INVALID_REQUEST", message: "x", details: ["code": .string(other)])), unit: 0)
            #expect(machine.payloadVersion == .v3, "\(other) must not downgrade")
        }
        let refused = ConnectError.rejected(GatewayErrorShape(code: "INVALID_REQUEST", message: "x", details: ["code": "DEVICE_AUTH_SIGNATURE_INVALID"]))
        #expect(machine.connectFailed(refused, unit: 0) == .reconnect(afterSeconds: 0, attempt: machine.attempt))
        #expect(machine.payloadVersion == .v2)
        // The v2 proof refused too: no third format and no immediate retry; the refusal's own behaviour applies.
        if case .reconnect(0, _) = machine.connectFailed(refused, unit: 0) { Issue.record("retried at once again") }
        #expect(machine.payloadVersion == .v2)
    }

    @Test func `pairing required keeps retrying until approved`() async throws {
        let pairing: JSONValue = ["code": "PAIRING_REQUIRED", "requestId": "req-1", "waitForResolution": true]
        let gw = ScriptedGateway(.init(tickMs: 10_000, refusals: [pairing, pairing]))
        let c = connection(gw)
        let run = Task { await c.run() }
        defer { run.cancel() }
        let waiting = await waitFor(c) { if case .waitingForApproval = $0 { true } else { false } }
        if case .waitingForApproval(let id, _)? = waiting { #expect(id == "req-1") } else { Issue.record("never waited") }
        #expect(await waitFor(c, Self.isConnected) != nil)
        #expect(gw.connects.withLock { $0.count } == 3)
    }

    @Test func `a revoked device token pauses reconnects with an explanation`() async throws {
        let gw = ScriptedGateway(.init(refusals: [["code": "AUTH_DEVICE_TOKEN_MISMATCH"]]))
        let c = connection(gw)
        let run = Task { await c.run() }
        let s = await waitFor(c) { if case .disconnected = $0 { true } else { false } }
        guard case .disconnected(let reason)? = s else {
            Issue.record("did not stop")
            return
        }
        #expect(reason.contains("run 'openclaw-talk setup' again"))
        #expect(reason.contains("paused"))
        await run.value
        #expect(gw.connects.withLock { $0.count } == 1)
    }

    @Test func `the token never appears in the logs`() async throws {
        let logs = InMemoryLogHandler.Store()
        let gw = ScriptedGateway(.init(tickMs: 10_000))
        let c = connection(gw, logs: logs)
        let run = Task { await c.run() }
        try #require(await waitFor(c, Self.isConnected) != nil)
        run.cancel()
        await run.value
        #expect(!logs.text.isEmpty)
        #expect(!logs.text.contains("secret-token"))
    }
}

@Suite struct ReconnectStateMachineTests {
    @Test func `retryAfterMs from the Gateway is honoured`() {
        var m = GatewayConnection.StateMachine()
        let busy = ConnectError.rejected(GatewayErrorShape(code: "UNAVAILABLE", message: "starting", retryAfterMs: 2500))
        #expect(m.connectFailed(busy, unit: 0) == .reconnect(afterSeconds: 2.5, attempt: 1))
    }

    @Test func `the watchdog fires after twice the tick interval`() {
        let t0 = ContinuousClock.now
        #expect(!GatewayConnection.StateMachine.isDead(lastFrameAt: t0, now: t0 + .milliseconds(1999), tickIntervalMs: 1000))
        #expect(GatewayConnection.StateMachine.isDead(lastFrameAt: t0, now: t0 + .milliseconds(2001), tickIntervalMs: 1000))
    }
}

/// A realtime relay tool call listens to the Gateway's events for the run it started and then stops: each such
/// reader must be forgotten, or every one keeps (and fills) a buffer of 256 events for the connection's life.
@Suite struct GatewaySubscriberTests {
    @Test func `readers that stop listening are unsubscribed`() async throws {
        let gateway = ScriptedGateway()
        let c = GatewayConnectionTests().connection(gateway)
        let run = Task { await c.run() }
        defer { run.cancel() }
        let before = await c.subscriberCount
        for _ in 0..<50 {
            let events = await c.eventUpdates()
            let states = await c.stateUpdates()
            let reader = Task {
                for await _ in events {}
                for await _ in states {}
            }
            reader.cancel()
            await reader.value
        }
        var left = await c.subscriberCount
        for _ in 0..<200 where left > before {
            try await Task.sleep(for: .milliseconds(10))
            left = await c.subscriberCount
        }
        #expect(left == before, "\(left - before) of 100 readers that stopped are still subscribed")
    }
}
