import Testing

@testable import SessionBridge

@Suite struct WebSocketHandshakeTests {
    @Test func `the accept value matches the RFC 6455 example`() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func `keys are 16 random bytes in base64`() {
        let keys = (0..<20).map { _ in WebSocketHandshake().key }
        #expect(Set(keys).count == 20)
        #expect(keys.allSatisfy { $0.count == 24 && $0.hasSuffix("==") })
    }

    @Test func `the request carries host, version 13, the key and extra headers`() throws {
        let handshake = WebSocketHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==")
        let endpoint = try GatewayEndpoint(parsing: "ws://[::1]:18789/openclaw-gw?x=1")
        let text = String(
            decoding: handshake.request(for: endpoint, extraHeaders: [WebSocketHeader(name: "X-Test", value: "1")]),
            as: UTF8.self)
        #expect(text.hasPrefix("GET /openclaw-gw?x=1 HTTP/1.1\r\nHost: [::1]:18789\r\n"))
        for line in ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                     "Sec-WebSocket-Version: 13", "X-Test: 1"] {
            #expect(text.contains("\r\n\(line)\r\n"))
        }
        #expect(text.hasSuffix("\r\n\r\n"))
    }

    static let accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    static let responses: [(String, WebSocketError?)] = [
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n", nil),
        ("HTTP/1.1 101 OK\r\nupgrade: WebSocket\r\nconnection: keep-alive, upgrade\r\nsec-websocket-accept: \(accept)\r\n\r\n", nil),
        ("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", .upgradeRejected(statusLine: "HTTP/1.1 403 Forbidden")),
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAA\r\n\r\n",
         .acceptKeyMismatch(expected: accept, received: ["AAAA"])),
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
         .acceptKeyMismatch(expected: accept, received: [])),
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n",
         .acceptKeyMismatch(expected: accept, received: [accept, accept])),
        ("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n",
         .malformedUpgradeResponse(reason: "no \"Upgrade: websocket\" header")),
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
         .malformedUpgradeResponse(reason: "extension \"permessage-deflate\" was not offered")),
        ("SSH-2.0-OpenSSH_9.2\r\n\r\n", .malformedUpgradeResponse(reason: "bad status line \"SSH-2.0-OpenSSH_9.2\"")),
    ]

    @Test(arguments: responses)
    func `upgrade responses are checked`(response: String, expected: WebSocketError?) {
        let handshake = WebSocketHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==")
        if let expected {
            #expect(throws: expected) { try handshake.validate(responseHead: Array(response.utf8)) }
        } else {
            #expect(throws: Never.self) { try handshake.validate(responseHead: Array(response.utf8)) }
        }
    }

    @Test func `the response head ends at the first blank line`() {
        let bytes = Array("HTTP/1.1 101 X\r\nA: b\r\n\r\n".utf8) + [0x81, 0x00]
        #expect(WebSocketHandshake.responseHeadLength(in: bytes) == bytes.count - 2)
        #expect(WebSocketHandshake.responseHeadLength(in: Array("HTTP/1.1 101 X\r\n".utf8)) == nil)
    }
}
