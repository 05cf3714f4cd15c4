import Foundation
import TalkLogging
import Testing

@testable import SessionBridge

/// wss:// against the Python peer serving a self-signed certificate it generated: the fingerprint the
/// peer computed over the DER with `hashlib` is the reference.
@Suite struct TLSConnectionTests {
    let logger = Logger(label: "test.tls")

    func endpoint(_ peer: PeerProcess, host: String = "127.0.0.1", _ route: String = "/echo") throws -> GatewayEndpoint {
        try GatewayEndpoint(parsing: "wss://\(host == "::1" ? "[::1]" : host):\(peer.port)\(PeerProcess.tagged(route))")
    }

    @Test(arguments: [false, true])
    func `the correct pin connects, in any notation`(colonNotation: Bool) async throws {
        let peer = try await SharedPeer.tls.get()
        let fingerprint = try #require(peer.info.fingerprint)
        let pin = colonNotation
            ? "SHA256:" + stride(from: 0, to: 64, by: 2).map { offset -> String in
                let start = fingerprint.index(fingerprint.startIndex, offsetBy: offset)
                return fingerprint[start..<fingerprint.index(start, offsetBy: 2)].uppercased()
            }.joined(separator: ":")
            : fingerprint
        let client = try await WebSocketClient.connect(
            to: endpoint(peer), options: .init(tlsPinSHA256: pin), logger: logger)
        #expect(client.peerCertificateSHA256 == fingerprint)
        try await client.send(text: "pinned")
        #expect(try await client.receive() == .text("pinned"))
        await client.close()
    }

    @Test func `a wrong pin is refused with both fingerprints`() async throws {
        let peer = try await SharedPeer.tls.get()
        let actual = try #require(peer.info.fingerprint)
        let wrong = String(repeating: "ab", count: 32)
        await #expect(throws: TransportError.pinMismatch(expected: wrong, actual: actual)) {
            try await WebSocketClient.connect(to: endpoint(peer), options: .init(tlsPinSHA256: wrong), logger: logger)
        }
        let message = TransportError.pinMismatch(expected: wrong, actual: actual).description
        #expect(message.contains(wrong) && message.contains(actual))
    }

    @Test func `an untrusted certificate without a pin is refused with its fingerprint`() async throws {
        let peer = try await SharedPeer.tls.get()
        let fingerprint = try #require(peer.info.fingerprint)
        await #expect {
            try await WebSocketClient.connect(to: endpoint(peer), options: .init(), logger: logger)
        } throws: { error in
            guard case .untrustedCertificate(let host, let reported, let reason)? = error as? TransportError else {
                return false
            }
            return host == "127.0.0.1" && reported == fingerprint && reason.contains("self-signed")
        }
    }

    @Test func `the probe reads the fingerprint for a trust prompt`() async throws {
        let peer = try await SharedPeer.tls.get()
        let probed = try await probeCertificateFingerprint(host: "127.0.0.1", port: peer.port, timeout: .seconds(5))
        #expect(probed == peer.info.fingerprint)
    }

    @Test(arguments: ["localhost", "127.0.0.1"])
    func `a certificate trusted through the CA file connects without a pin`(host: String) async throws {
        let peer = try await SharedPeer.tls.get()
        var options = WebSocketClient.Options()
        options.caFile = peer.info.cert
        let client = try await WebSocketClient.connect(to: endpoint(peer, host: host), options: options, logger: logger)
        #expect(client.peerCertificateSHA256 == peer.info.fingerprint)
        try await client.send(binary: [0, 255])
        #expect(try await client.receive() == .binary([0, 255]))
        await client.close()
    }

    @Test func `IPv6 loopback works and its address is verified against the certificate`() async throws {
        let peer = try await PeerProcess.start(["--tls", "--host", "::1"])
        defer { peer.stop() }
        var options = WebSocketClient.Options()
        options.caFile = peer.info.cert
        let client = try await WebSocketClient.connect(to: endpoint(peer, host: "::1"), options: options, logger: logger)
        try await client.send(text: "v6")
        #expect(try await client.receive() == .text("v6"))
        await client.close()
    }

    /// The TLS handshake over a TCP connection to ::1, verifying the certificate against `host`.
    private func handshake(port: Int, verifying host: String, caFile: String?) async throws -> String {
        let (engine, fingerprint) = try await SocketIOThread.start(name: "zone test", timeout: .seconds(10)) {
            waiter throws(TransportError) in
            let (fd, _) = try TCPConnector.connect(host: "::1", port: port, waiter: waiter)
            return try TLSSocketIO.handshake(
                fileDescriptor: fd, host: host, port: port, policy: .verify(pin: nil, caFile: caFile), waiter: waiter)
        }
        await engine.close()
        return fingerprint
    }

    @Test func `an IPv6 address with a zone is still checked against the certificate's addresses`() async throws {
        // A certificate trusted through the CA file but naming only 127.0.0.1: the zone (which picks the
        // interface, and which glibc accepts only on link-local addresses) must not switch the address check
        // off. The socket goes to ::1; the name verified is the zoned address.
        let peer = try await PeerProcess.start(["--tls", "--host", "::1", "--cert-ips", "127.0.0.1"])
        defer { peer.stop() }
        for zoned in ["::1%lo", "::1%1"] {
            await #expect {
                try await handshake(port: peer.port, verifying: zoned, caFile: peer.info.cert)
            } throws: { error in
                guard case .untrustedCertificate(_, _, let reason)? = error as? TransportError else { return false }
                return reason.contains("mismatch")
            }
        }
        // A certificate that does carry ::1 is verified through the zoned form.
        let good = try await PeerProcess.start(["--tls", "--host", "::1"])
        defer { good.stop() }
        #expect(try await handshake(port: good.port, verifying: "::1%lo", caFile: good.info.cert) == good.info.fingerprint)
        #expect(TLSSocketIO.verifiableAddress("fe80::1%eth0") == "fe80::1")
        #expect(TLSSocketIO.verifiableAddress("gateway.local") == nil)
    }

    @Test func `a trusted certificate for another host name is refused`() async throws {
        let peer = try await PeerProcess.start(["--tls", "--cert-host", "gateway.invalid"])
        defer { peer.stop() }
        var options = WebSocketClient.Options()
        options.caFile = peer.info.cert
        await #expect {
            try await WebSocketClient.connect(to: endpoint(peer, host: "localhost"), options: options, logger: logger)
        } throws: { error in
            guard case .untrustedCertificate(_, let fingerprint, let reason)? = error as? TransportError else {
                return false
            }
            return fingerprint == peer.info.fingerprint && reason.contains("mismatch")
        }
    }

    @Test func `TLS to a plaintext port fails the handshake cleanly`() async throws {
        let peer = try await SharedPeer.websockets.get()
        var options = WebSocketClient.Options()
        options.connectTimeout = .seconds(5)
        await #expect {
            try await WebSocketClient.connect(
                to: GatewayEndpoint(parsing: "wss://127.0.0.1:\(peer.port)/echo"), options: options, logger: logger)
        } throws: { error in
            guard case .tlsHandshakeFailed? = error as? TransportError else { return false }
            return true
        }
    }

    @Test func `an unreadable CA file is reported`() async throws {
        let peer = try await SharedPeer.tls.get()
        var options = WebSocketClient.Options()
        options.caFile = "/nonexistent/ca.pem"
        await #expect {
            try await WebSocketClient.connect(to: endpoint(peer), options: options, logger: logger)
        } throws: { error in
            guard case .caFileUnreadable(let path, _)? = error as? TransportError else { return false }
            return path == "/nonexistent/ca.pem"
        }
    }

    @Test func `an invalid pin is refused before connecting`() async throws {
        await #expect(throws: TransportError.invalidPin("not-a-pin")) {
            try await WebSocketClient.connect(
                to: GatewayEndpoint(parsing: "wss://127.0.0.1:1"), options: .init(tlsPinSHA256: "not-a-pin"),
                logger: logger)
        }
    }
}
