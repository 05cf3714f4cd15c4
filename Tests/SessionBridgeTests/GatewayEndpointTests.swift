import Testing

@testable import SessionBridge

@Suite struct GatewayEndpointTests {
    static let parsed: [(String, GatewayEndpoint.Scheme, String, Int, String)] = [
        ("ws://127.0.0.1", .ws, "127.0.0.1", 18_789, "/"),
        ("ws://gateway.local:9000/", .ws, "gateway.local", 9_000, "/"),
        ("wss://Gateway.Example.com", .wss, "gateway.example.com", 443, "/"),
        ("wss://host:8443/openclaw-gw", .wss, "host", 8_443, "/openclaw-gw"),
        ("http://10.0.0.5", .ws, "10.0.0.5", 18_789, "/"),
        ("https://host.ts.net/ctx?x=1#frag", .wss, "host.ts.net", 443, "/ctx?x=1"),
        ("ws://[::1]:18789", .ws, "::1", 18_789, "/"),
        ("  WSS://[fe80::1]/p  ", .wss, "fe80::1", 443, "/p"),
        ("ws://host?token=x", .ws, "host", 18_789, "/?token=x"),
    ]

    @Test(arguments: parsed)
    func `URLs parse into scheme, host, port and path`(
        text: String, scheme: GatewayEndpoint.Scheme, host: String, port: Int, path: String
    ) throws {
        let endpoint = try GatewayEndpoint(parsing: text)
        #expect(endpoint == GatewayEndpoint(scheme: scheme, host: host, port: port, path: path))
        #expect(try GatewayEndpoint(parsing: endpoint.description) == endpoint)
    }

    @Test(arguments: [
        "127.0.0.1:18789", "ftp://host", "ws://", "ws://:80", "ws://host:0", "ws://host:70000", "ws://host:abc",
        "ws://user:pw@host", "ws://[::1", "ws://::1:80", "ws://ho st", "wss://host/\u{0}",
    ])
    func `malformed URLs are refused with the reason`(text: String) {
        #expect {
            try GatewayEndpoint(parsing: text)
        } throws: { error in
            guard case TransportError.invalidEndpoint(_, let reason)? = error as? TransportError else { return false }
            return !reason.isEmpty
        }
    }

    static let plaintext: [(String, Bool)] = [
        ("localhost", true), ("127.0.0.1", true), ("127.8.9.10", true), ("::1", true), ("10.1.2.3", true),
        ("172.16.0.1", true), ("172.31.255.255", true), ("192.168.1.20", true), ("169.254.10.1", true),
        ("fe80::1", true), ("fe80::1%eth0", true), ("fc00::5", true), ("fd12:3456::1", true), ("foo.local", true),
        ("Foo.Local.", true), ("10.0.2.2", true), ("::ffff:192.168.0.1", true),
        ("8.8.8.8", false), ("example.com", false), ("172.32.0.1", false), ("172.15.0.1", false),
        ("gateway.tail1234.ts.net", false), ("100.64.0.1", false), ("2001:db8::1", false), ("localhost.example.com", false),
        ("::ffff:8.8.8.8", false), ("fec0::1", false),
    ]

    @Test(arguments: plaintext)
    func `plaintext is allowed only for local hosts`(host: String, allowed: Bool) {
        #expect(GatewayEndpoint.allowsPlaintext(host: host) == allowed)
    }

    @Test func `plaintext to a public host is refused before connecting`() async throws {
        let start = ContinuousClock.now
        await #expect(throws: TransportError.plaintextNotAllowed(host: "203.0.113.7")) {
            try await WebSocketClient.connect(
                to: GatewayEndpoint(parsing: "ws://203.0.113.7:18789"), options: .init(connectTimeout: .seconds(30)),
                logger: .init(label: "test"))
        }
        // A connection attempt to this unroutable address would end in another error or in the 30 s
        // connect timeout; the bound only tells those apart from a refusal made before connecting.
        #expect(ContinuousClock.now - start < .seconds(10))
        let message = TransportError.plaintextNotAllowed(host: "example.com").description
        #expect(message.contains("wss://example.com"))
    }
}

@Suite struct CertificateFingerprintTests {
    static let hex = "a2e5743451e2fc3fe0cd92fc4b53920f862c1e739ac7f09b39cd66f8edeb744b"

    @Test(arguments: [
        hex, hex.uppercased(), "sha256:" + hex, "SHA-256 " + hex, "sha-256:" + hex,
        stride(from: 0, to: 64, by: 2).map { i -> String in
            let start = hex.index(hex.startIndex, offsetBy: i)
            return String(hex[start..<hex.index(start, offsetBy: 2)]).uppercased()
        }.joined(separator: ":"),
    ])
    func `pins in common notations normalise to lowercase hex`(text: String) throws {
        #expect(try CertificateFingerprint.normalize(text) == Self.hex)
    }

    @Test(arguments: ["", "abc", String(hex.dropLast()), hex + "00"])
    func `pins of the wrong length are refused`(text: String) {
        #expect(throws: TransportError.invalidPin(text)) { try CertificateFingerprint.normalize(text) }
    }
}
