import Foundation
import Synchronization
import TalkLogging
import Testing

@testable import SessionBridge

/// `reconnectNow()` (the daemon's `reconnect`): a live socket is dropped and replaced at once, and a backoff
/// under way is cut short.
@Suite struct GatewayReconnectNowTests {
    struct Refused: Error {}

    func connection(_ gateway: ScriptedGateway, failFirst: Int = 0, backoff: Backoff) -> GatewayConnection {
        let failures = Mutex(failFirst)
        var deps = GatewayConnection.Dependencies(openTransport: {
            if failures.withLock({ n in defer { n -= 1 }; return n > 0 }) { throw Refused() }
            return gateway.open()
        }) {
            GatewayConnection.ConnectMaterial(profile: .node(displayName: "t", version: "0.1.0"), auth: ConnectAuth(token: "secret-token"))
        }
        deps.random = { 0 }
        var timing = GatewayConnection.Timing()
        timing.backoff = backoff
        return GatewayConnection(identity: ConnectHandshakeTests.identity, dependencies: deps, timing: timing,
                                 logger: Logger(label: "t", handler: InMemoryLogHandler()))
    }

    @Test func `a connected socket is dropped and replaced at once, the state saying why`() async throws {
        let gw = ScriptedGateway()
        // A long backoff: only a reconnect that skips it connects again within the test's bound.
        let c = connection(gw, backoff: Backoff(initial: 20, maximum: 60))
        let states = await c.stateUpdates()
        let run = Task { await c.run() }
        defer { run.cancel() }
        // Ends the state stream (so the test fails instead of hanging) when reconnecting never happens.
        let bound = Task { try? await Task.sleep(for: .seconds(40)); run.cancel() }
        defer { bound.cancel() }
        var seen: [ConnectionState] = []
        var asked = false
        let start = ContinuousClock.now
        for await s in states {
            seen.append(s)
            if case .connected = s {
                if asked { break }
                asked = true
                await c.reconnectNow()
            }
            if ContinuousClock.now - start > .seconds(30) { break }
        }
        let waiting = seen.compactMap { s -> (Date, String)? in
            if case .reconnecting(_, let next, let reason) = s { (next, reason) } else { nil }
        }
        #expect(waiting.count == 1 && waiting.first?.1 == "Reconnect requested.", "\(seen)")
        #expect(waiting.first.map { abs($0.0.timeIntervalSinceNow) < 5 } == true, "retried now, not after the backoff")
        #expect(gw.sockets.withLock { $0.count } == 2)
        #expect(await gw.sockets.withLock { $0.first }?.isClosed == true)
        // Under the 20 s backoff, with room for a loaded machine: a reconnect that waited it out fails here.
        #expect(ContinuousClock.now - start < .seconds(19))
    }

    @Test func `a backoff under way ends at once`() async throws {
        let gw = ScriptedGateway()
        let c = connection(gw, failFirst: 1, backoff: .withoutProbes(initial: 30, maximum: 60))
        let run = Task { await c.run() }
        defer { run.cancel() }
        // Ends the state stream (so the test fails instead of hanging) when reconnecting never happens.
        let bound = Task { try? await Task.sleep(for: .seconds(40)); run.cancel() }
        defer { bound.cancel() }
        let updates = await c.stateUpdates()
        for await s in updates { if case .reconnecting = s { break } }
        let start = ContinuousClock.now
        await c.reconnectNow()
        var connected = false
        for await s in updates {
            if case .connected = s { connected = true; break }
            if ContinuousClock.now - start > .seconds(28) { break }
        }
        #expect(connected)
        #expect(ContinuousClock.now - start < .seconds(25), "the 30 s backoff was cut short")
    }
}
