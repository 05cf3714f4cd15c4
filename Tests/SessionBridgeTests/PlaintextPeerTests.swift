import Foundation
import Synchronization
import TalkBench
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge

/// Plaintext `ws://` is judged by the address actually reached, not the name written: a name that
/// looks local but resolves elsewhere is refused before any connection is made to it. Names resolve
/// through an injected resolver, so no DNS is asked and no packet leaves the machine.
@Suite struct PlaintextPeerTests {
    let logger = Logger(label: "test.plaintext")

    /// A resolver answering from `table`, recording what it was asked.
    final class FakeDNS: Sendable {
        let table: [String: [String]]
        let asked = Mutex<[String]>([])
        init(_ table: [String: [String]]) { self.table = table }

        var resolver: HostResolver {
            HostResolver { host, port throws(TransportError) in
                self.asked.withLock { $0.append(host) }
                guard let addresses = self.table[host] else { throw .resolveFailed(host: host, reason: "not in the test table") }
                return addresses.compactMap { SocketAddress(numeric: $0, port: port) }
            }
        }
    }

    @Test(arguments: [("gateway.local", "192.0.2.1"), ("evil.localhost", "198.51.100.7"), ("printer.local", "2001:db8::5")])
    func `a local-looking name that resolves to a public address is refused before connecting`(name: String, address: String) async throws {
        let dns = FakeDNS([name: [address]])
        var options = WebSocketClient.Options(connectTimeout: .seconds(30))
        options.resolver = dns.resolver
        let started = ContinuousClock.now
        await #expect(throws: TransportError.plaintextPeerNotAllowed(host: name, address: address)) {
            try await WebSocketClient.connect(to: GatewayEndpoint(parsing: "ws://\(name):18789"), options: options, logger: logger)
        }
        #expect(dns.asked.withLock { $0 } == [name], "the refusal must come from the resolved address")
        // Refused without a connect attempt: well before the 30 s a connect to an unanswering address would take.
        #expect(ContinuousClock.now - started < .seconds(25))
    }

    @Test func `a name resolving to loopback connects and its peer counts as loopback`() async throws {
        let peer = try await SharedPeer.websockets.get()
        let dns = FakeDNS(["gateway.local": ["192.0.2.1", "127.0.0.1"]])
        var options = WebSocketClient.Options(connectTimeout: .seconds(10))
        options.resolver = dns.resolver
        let endpoint = try GatewayEndpoint(parsing: "ws://gateway.local:\(peer.port)\(PeerProcess.tagged("/echo"))")
        // The public address is skipped, never tried; the loopback one is reached.
        let client = try await WebSocketClient.connect(to: endpoint, options: options, logger: logger)
        #expect(client.peerAddress?.description == "127.0.0.1")
        #expect(WebSocketTransport(client: client).peerIsLoopback)
        await client.close()
    }

    @Test func `address literals resolve numerically, a trailing dot included`() throws {
        for (text, expected) in [("127.0.0.1.", "127.0.0.1"), ("::1", "::1"), ("10.1.2.3", "10.1.2.3")] {
            let resolved = try HostResolver.system.resolve(text, 80)
            #expect(resolved.map(\.description) == [expected], "\(text)")
        }
    }

    @Test func `setup over ws:// to a host that is not this machine warns that the token crosses the network`() async throws {
        let gw = try await offPool { try ReferenceGatewayProcess(["--token", "warn-token", "--auto-approve"]) }
        defer { gw.stop() }
        let root = try TempDir()
        let dns = FakeDNS(["gateway.local": ["127.0.0.1"], "127.0.0.1": ["127.0.0.1"]])
        var setup = GatewaySetup(paths: .under(root.path), version: "0.1.0-test", logger: logger)
        setup.resolver = dns.resolver
        setup.timing = GatewayIntegrationTests.fastTiming
        var code = try SetupCode.parse("ws://gateway.local:\(gw.startup.port)")
        code.token = "warn-token"
        let seen = Mutex<[GatewaySetup.Progress]>([])
        let hooks = GatewaySetup.Hooks(confirmTrust: { _, _ in nil }) { p in seen.withLock { $0.append(p) } }
        var request = GatewaySetup.Request(code: code)
        let outcome = try await setup.run(request, hooks: hooks)
        #expect(outcome.url == "ws://gateway.local:\(gw.startup.port)")
        #expect(seen.withLock { $0 }.contains(.plaintextOnNetwork(host: "gateway.local")))
        // To loopback itself, no warning.
        var local = GatewaySetup.Request(code: try SetupCode.parse("ws://127.0.0.1:\(gw.startup.port)"))
        local.code.token = "warn-token"
        seen.withLock { $0 = [] }
        _ = try await setup.run(local, hooks: hooks)
        #expect(!seen.withLock { $0 }.contains { if case .plaintextOnNetwork = $0 { true } else { false } })
    }
}
