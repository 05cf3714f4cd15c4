import Foundation
import TalkLogging
import Testing

@testable import SessionBridge

/// The client against an independent peer (Python `websockets`, and a raw asyncio server for hand-made
/// and hostile frames) over real loopback sockets.
@Suite struct WebSocketClientPeerTests {
    let logger = Logger(label: "test.ws")

    func connect(_ peer: PeerProcess, _ path: String, options: WebSocketClient.Options = .init()) async throws
        -> WebSocketClient
    {
        try await WebSocketClient.connect(
            to: GatewayEndpoint(parsing: "ws://127.0.0.1:\(peer.port)\(path)"), options: options, logger: logger)
    }

    @Test func `a fragmented message with control frames in between is reassembled`() async throws {
        let peer = try await SharedPeer.raw.get()
        let path = PeerProcess.tagged("/fragmented")
        let client = try await connect(peer, path)
        #expect(try await client.receive() == .text("Hello wörld"))
        // The raw peer read our answer to the ping it sent between fragments, and says what it was.
        #expect(try await client.receive() == .text("got 0xa mid-ping masked=True"))
        await client.close()
        #expect(await peer.waitForLine(startingWith: "CLOSE \(path) ") == "CLOSE \(path) 1000")
        // The peer reads our frames in order and reports an unmasked one before the close that follows it,
        // so by now any UNMASKED line is already there.
        #expect(await peer.waitForLine(startingWith: "UNMASKED \(path)", timeout: .zero) == nil, "a client frame was not masked")
    }

    @Test func `a server ping is answered with a pong`() async throws {
        let peer = try await SharedPeer.websockets.get()
        let client = try await connect(peer, "/ping")
        #expect(try await client.receive() == .text("pong-ok"))
        await client.close()
    }

    @Test func `our ping is answered and noted`() async throws {
        let peer = try await SharedPeer.websockets.get()
        let client = try await connect(peer, "/echo")
        #expect(await client.lastPongReceivedAt == nil)
        try await client.ping()
        try await client.send(text: "after ping")
        #expect(try await client.receive() == .text("after ping"))
        #expect(await client.lastPongReceivedAt != nil)
        await client.close()
    }

    @Test(arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1011, 4001] as [UInt16])
    func `a server close surfaces its code and reason`(code: UInt16) async throws {
        let peer = try await SharedPeer.websockets.get()
        let path = PeerProcess.tagged("/close?code=\(code)&reason=closing+now")
        let client = try await connect(peer, path)
        let expected = WebSocketError.closed(code: WebSocketErrorCode(codeNumber: code), reason: "closing now")
        await #expect(throws: expected) { try await client.receive() }
        // Every later call reports the same end.
        await #expect(throws: expected) { try await client.send(text: "late") }
        await #expect(throws: expected) { try await client.receive() }
        // We echoed the server's code.
        #expect(await peer.waitForLine(startingWith: "CLOSE \(path) ") == "CLOSE \(path) \(code)")
    }

    @Test(arguments: [WebSocketErrorCode.normalClosure, .goingAway, .policyViolation, .unknown(4321)])
    func `our close sends its code and completes the handshake`(code: WebSocketErrorCode) async throws {
        let peer = try await SharedPeer.websockets.get()
        let path = PeerProcess.tagged("/echo")
        // A close timeout far beyond any scheduling delay: a close that ends well before it ended because the
        // server answered, not because the client gave up waiting (that would take the full 30 s).
        var options = WebSocketClient.Options()
        options.closeTimeout = .seconds(30)
        let client = try await connect(peer, path, options: options)
        let start = ContinuousClock.now
        await client.close(code: code, reason: "done")
        #expect(ContinuousClock.now - start < .seconds(10), "the server answered, no close timeout")
        #expect(await peer.waitForLine(startingWith: "CLOSE \(path) ") == "CLOSE \(path) \(code.codeNumber)")
        await #expect(throws: WebSocketError.closed(code: code, reason: "done")) { try await client.send(text: "x") }
    }

    @Test func `close while another task is receiving ends that receive`() async throws {
        let peer = try await SharedPeer.websockets.get()
        let path = PeerProcess.tagged("/echo")
        let client = try await connect(peer, path)
        let pending = Task { try await client.receive() }
        try await Task.sleep(for: .milliseconds(50))
        await client.close(code: .goingAway)
        await #expect(throws: WebSocketError.closed(code: .goingAway, reason: "")) { try await pending.value }
        #expect(await peer.waitForLine(startingWith: "CLOSE \(path) ") == "CLOSE \(path) 1001")
    }

    @Test func `a cancelled receive leaves the connection usable`() async throws {
        let peer = try await SharedPeer.websockets.get()
        let client = try await connect(peer, "/echo")
        let waiting = Task { try await client.receive() }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        try await client.send(text: "still here")
        #expect(try await client.receive() == .text("still here"))
        await client.close()
    }

    @Test(arguments: ["/oversized?bytes=8000000", "/oversized-fragments?bytes=8000000"])
    func `an oversized message fails with 1009 without being buffered`(route: String) async throws {
        let peer = try await SharedPeer.websockets.get()
        let path = PeerProcess.tagged(route)
        let client = try await connect(peer, path)
        await #expect(throws: WebSocketError.messageTooLarge(limit: 65_536)) { try await client.receive() }
        // At most the permitted message plus one read (64 KiB each) was ever held, not the 8 MB sent.
        #expect(await client.peakBufferedByteCount <= 2 * 65_536 + 14)
        let closeLine = await peer.waitForLine(startingWith: "CLOSE \(path) ")
        #expect(closeLine == "CLOSE \(path) 1009")
    }

    @Test func `a frame declaring 16 MiB is refused from its header`() async throws {
        let peer = try await SharedPeer.raw.get()
        let client = try await connect(peer, "/huge-declared")
        await #expect(throws: WebSocketError.messageTooLarge(limit: 65_536)) { try await client.receive() }
        #expect(await client.peakBufferedByteCount <= 65_536 + 14)
    }

    @Test func `a raised limit admits larger messages`() async throws {
        let peer = try await SharedPeer.websockets.get()
        let client = try await connect(peer, "/oversized?bytes=3000000")
        await client.setMaxMessageSize(25 * 1_048_576)
        #expect(try await client.receive() == .binary([UInt8](repeating: 0, count: 3_000_000)))
        await client.close()
    }

    static let hostile: [(String, WebSocketError, UInt16)] = [
        ("/masked", .maskedFrameFromServer, 1002),
        ("/garbage", .reservedBitsSet, 1002),
        ("/reserved-opcode", .unknownOpcode(3), 1002),
        ("/control-too-long", .multiByteControlFrameLength(length: 126), 1002),
        ("/fragmented-control", .fragmentedControlFrame, 1002),
        ("/invalid-utf8", .invalidUTF8, 1007),
        ("/unexpected-continuation", .unexpectedContinuationFrame, 1002),
        ("/close-invalid-code", .invalidCloseFrame(code: 1005), 1002),
    ]

    @Test(arguments: hostile)
    func `hostile frames close the connection with the right code`(
        route: String, error: WebSocketError, code: UInt16
    ) async throws {
        let peer = try await SharedPeer.raw.get()
        let path = PeerProcess.tagged(route)
        let client = try await connect(peer, path)
        await #expect(throws: error) { try await client.receive() }
        #expect(await peer.waitForLine(startingWith: "CLOSE \(path) ") == "CLOSE \(path) \(code)")
        await #expect(throws: error) { try await client.send(text: "after the error") }
    }

    @Test(arguments: ["/truncated", "/drop"])
    func `a connection dropped mid-frame is a clean error`(path: String) async throws {
        let peer = try await SharedPeer.raw.get()
        let client = try await connect(peer, path)
        let start = ContinuousClock.now
        await #expect {
            try await client.receive()
        } throws: { error in
            guard case WebSocketError.connectionLost(let reason) = error else { return false }
            return path == "/drop" || reason.contains("inside a frame")
        }
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func `a refused upgrade reports the server's status line`() async throws {
        let peer = try await SharedPeer.raw.get()
        await #expect(throws: WebSocketError.upgradeRejected(statusLine: "HTTP/1.1 403 Forbidden")) {
            try await connect(peer, "/status-403")
        }
    }

    @Test func `a wrong or repeated Sec-WebSocket-Accept is refused`() async throws {
        let peer = try await SharedPeer.raw.get()
        await #expect {
            try await connect(peer, "/bad-accept")
        } throws: { error in
            guard case .acceptKeyMismatch(let expected, let received)? = error as? WebSocketError else { return false }
            return received == ["AAAAAAAAAAAAAAAAAAAAAAAAAAA="] && expected.count == 28
        }
        // Two headers with the right value are still refused: exactly one is required.
        await #expect {
            try await connect(peer, "/two-accepts")
        } throws: { error in
            guard case .acceptKeyMismatch(let expected, let received)? = error as? WebSocketError else { return false }
            return received == [expected, expected]
        }
    }

    @Test func `a server that never answers the upgrade times out`() async throws {
        let peer = try await SharedPeer.raw.get()
        var options = WebSocketClient.Options()
        options.connectTimeout = .milliseconds(500)
        let start = ContinuousClock.now
        await #expect(throws: TransportError.timedOut(host: "127.0.0.1", port: peer.port, stage: "WebSocket upgrade")) {
            try await connect(peer, "/silent", options: options)
        }
        // Catches the default 10 s bound used instead of the option, not a late scheduler.
        #expect(ContinuousClock.now - start < .seconds(7))
    }

    @Test(arguments: ["ws", "wss"])
    func `sending to a peer that hung up fails with an error instead of SIGPIPE`(scheme: String) async throws {
        let peer = try await (scheme == "ws" ? SharedPeer.raw : SharedPeer.rawTLS).get()
        let client = try await WebSocketClient.connect(
            to: GatewayEndpoint(parsing: "\(scheme)://127.0.0.1:\(peer.port)\(PeerProcess.tagged("/drop"))"),
            options: .init(tlsPinSHA256: peer.info.fingerprint), logger: logger)
        // The peer closed right after the upgrade; the first writes may still land in the socket buffer.
        var failure: (any Error)?
        for _ in 0..<200 where failure == nil {
            do {
                try await client.send(binary: [UInt8](repeating: 1, count: 4_096))
                try await Task.sleep(for: .milliseconds(5))
            } catch {
                failure = error
            }
        }
        // We are still alive (no SIGPIPE) and were told why.
        guard case .ioFailed? = failure as? TransportError else {
            Issue.record("expected a transport error, got \(String(describing: failure))")
            return
        }
    }

    @Test func `a client dropped without close releases its socket`() async throws {
        let peer = try await SharedPeer.websockets.get()
        let path = PeerProcess.tagged("/echo")
        var client: WebSocketClient? = try await connect(peer, path)
        try await client?.send(text: "x")
        #expect(try await client?.receive() == .text("x"))
        client = nil
        // The server sees the TCP connection end without a close frame: 1006.
        #expect(await peer.waitForLine(startingWith: "CLOSE \(path) ") == "CLOSE \(path) 1006")
    }

    @Test func `cancelling a connect that waits for the upgrade returns promptly`() async throws {
        let peer = try await SharedPeer.raw.get()
        let endpoint = try GatewayEndpoint(parsing: "ws://127.0.0.1:\(peer.port)\(PeerProcess.tagged("/silent"))")
        let logger = logger
        // The connect would give up only after 60 s: an attempt that ends well before that was cancelled.
        let options = WebSocketClient.Options(connectTimeout: .seconds(60))
        let attempt = Task { try await WebSocketClient.connect(to: endpoint, options: options, logger: logger) }
        try await Task.sleep(for: .milliseconds(100))
        let start = ContinuousClock.now
        attempt.cancel()
        await #expect(throws: CancellationError.self) { try await attempt.value }
        #expect(ContinuousClock.now - start < .seconds(20))
    }

    @Test func `connecting to a closed port fails with the reason`() async throws {
        // A port bound here and never listened on: a connection to it is refused, and nothing else can take the
        // port while the test holds it (a port freed by a stopped peer was taken by another test's server in CI,
        // and the connection was reset instead).
        let socket = try BoundPort()
        defer { socket.close() }
        let port = socket.port
        await #expect {
            try await WebSocketClient.connect(
                to: GatewayEndpoint(parsing: "ws://127.0.0.1:\(port)"), options: .init(), logger: logger)
        } throws: { error in
            guard case TransportError.connectFailed(_, port, let reason)? = error as? TransportError else { return false }
            return reason.lowercased().contains("refused")
        }
    }

    @Test func `extra headers reach the server and invalid ones are refused`() async throws {
        let peer = try await SharedPeer.raw.get()
        var options = WebSocketClient.Options()
        options.extraHeaders = [WebSocketHeader(name: "CF-Access-Client-Id", value: "abc")]
        let path = PeerProcess.tagged("/drop")
        let client = try await connect(peer, path, options: options)
        let line = try #require(await peer.waitForLine(startingWith: "HEADERS \(path) "))
        #expect(line.contains("\"cf-access-client-id\": \"abc\""))
        #expect(line.contains("\"sec-websocket-version\": \"13\""))
        await client.close()
        options.extraHeaders = [WebSocketHeader(name: "X-Evil", value: "a\r\nHost: other")]
        await #expect(throws: TransportError.invalidHeader(name: "X-Evil")) {
            try await connect(peer, "/drop", options: options)
        }
    }
}

/// A TCP socket bound to a free port on 127.0.0.1 and never put to listen: connecting to it is refused.
private struct BoundPort {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                Glibc.bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            Glibc.close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EADDRINUSE)
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { Glibc.close(fd) }
}
