import Foundation
import TalkBench
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge

/// A hostile Gateway that offers `policy.maxPayload` = 64 MiB and then sends the largest frames it can:
/// the client holds to 25 MiB, ignores a frame of millions of tiny values before building it, and the
/// process's peak resident size stays under a bound. `make test` runs it in a pass of its own (`ALONE_TESTS`):
/// the peak is the whole process's, and its 200 MB would also break the fuzz suites' growth checks beside it.
@Suite(.serialized) struct HostilePayloadMemoryTests {
    /// The bound on how far the peak resident size may rise while the frames arrive. A 25 MiB frame is
    /// held a few times over while it is decoded and parsed, on both sockets at once (about 210 MB
    /// measured); the same frames without the cap and the value guard took gigabytes.
    static let peakBoundKiB = 400_000

    /// VmHWM, the peak resident size, in KiB.
    static func peakKiB() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }

    /// refgw's connection ids of authenticated sockets, by role (node, operator).
    static func connections(_ gw: ReferenceGatewayProcess) async throws -> [String: Set<String>] {
        let clients = try await gw.control("clients")["clients"]?.arrayValue ?? []
        var byRole: [String: Set<String>] = [:]
        for client in clients where client["authenticated"]?.boolValue == true {
            guard let role = client["role"]?.stringValue, let id = client["connId"]?.stringValue else { continue }
            byRole[role, default: []].insert(id)
        }
        return byRole
    }

    /// Resets VmHWM to the current resident size (Linux 4.0+: `5` into clear_refs).
    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    @Test func `maximal frames from a Gateway offering 64 MiB keep memory under the bound`() async throws {
        let h = try await GatewayIntegrationTests.Harness.start(
            ["--print-setup-code", "--auto-approve", "--tick-interval-ms", "30000", "--max-payload", "\(64 << 20)"])
        _ = try await h.setup(code: try SetupCode.parse(h.gateway.startup.setupCode ?? ""))
        let session = try GatewaySession.fromStoredSetup(
            paths: h.paths, version: "0.1.0-test", timing: GatewayIntegrationTests.fastTiming, logger: h.logger)
        let run = Task { await session.run() }
        defer { run.cancel() }
        let node = session.node
        #expect(await GatewayIntegrationTests.waitFor(node, GatewayIntegrationTests.connected) != nil)
        #expect(await node.hello?.maxPayload == 25 << 20, "the offered 64 MiB must be capped")
        try #require(Self.resetPeak(), "cannot reset the peak resident size")
        let base = try #require(Self.peakKiB())

        // The largest frame accepted, padded with one long string: parsed, and the socket stays up.
        // Then the same size as millions of tiny values: refused before parsing, the socket stays up.
        let largest = (25 << 20) - 4096
        for frame: JSONValue in [["cmd": "send-raw", "size": .int(Int64(largest)), "target": "authenticated"],
                                 ["cmd": "send-raw", "size": .int(Int64(largest)), "shape": "values", "target": "authenticated"],
                                 ["cmd": "send-raw", "size": .int(Int64(largest)), "target": "authenticated"]] {
            let sent = try? await h.gateway.control(frame.jsonText)["sent"]?.intValue
            #expect(sent ?? 0 >= 1, "\(frame) was not sent")
            // The answer comes after the frame before it has been read and parsed.
            // (Not `try`: when the socket is lost the peak is still measured below.)
            let answer = try? await node.request(method: "health", timeout: .seconds(60))
            #expect(answer != nil, "lost after \(frame)")
        }
        // Over the cap (but under what the Gateway offered): refused from its header, each socket ends and a new
        // one comes back, which refgw lists under a new connection id. (This was a known issue for a while: on a
        // loaded machine the node socket was not replaced within 60 s. The cause was refgw's send-raw: the client
        // resets a socket it could not drain within its 1 s linger, websockets raised ConnectionClosed, and the
        // loop over the targets stopped there, so when refgw listed the operator socket first the node socket
        // never got the frame. Seen again with that fix reverted and the operator first: not replaced in 77 s.)
        let before = try await Self.connections(h.gateway)
        try #require(before["node"]?.count == 1 && before["operator"]?.count == 1, "\(before)")
        _ = try? await h.gateway.control((["cmd": "send-raw", "size": .int(60 << 20), "target": "authenticated"] as JSONValue).jsonText)
        func replaced(_ now: [String: Set<String>]) -> Bool {
            ["node", "operator"].allSatisfy { role in
                !(now[role] ?? []).isEmpty && (now[role] ?? []).isDisjoint(with: before[role] ?? [])
            }
        }
        var now = before
        // Bounded only to catch a hang: both come back within 2-6 s, also on a loaded machine.
        let deadline = ContinuousClock.now + .seconds(60)
        while !replaced(now), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            now = try await Self.connections(h.gateway)
        }
        #expect(replaced(now), "the oversized frame did not end both sockets, or they never came back: before \(before), now \(now)")
        // refgw lists the socket as authenticated when it sends hello-ok, before the client has read it:
        // a request in that gap fails at once with `.notConnected` (seen in CI), so wait for the client too.
        #expect(await GatewayIntegrationTests.waitFor(node, within: .seconds(30), GatewayIntegrationTests.connected) != nil,
                "the client never took the new socket as connected")
        do { _ = try await node.request(method: "health", timeout: .seconds(30)) } catch {
            Issue.record("health after the reconnect failed: \(error)")
        }

        let rise = try #require(Self.peakKiB()) - base
        print("peak resident rise while receiving maximal frames: \(rise / 1024) MiB")
        #expect(rise < Self.peakBoundKiB, "peak rose by \(rise / 1024) MiB")
    }
}
