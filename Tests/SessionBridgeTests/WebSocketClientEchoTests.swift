import Foundation
import TalkLogging
import Testing

@testable import SessionBridge

@Suite struct WebSocketClientEchoTests {
    let logger = Logger(label: "test.ws")

    @Test func `text and binary messages echo over ws`() async throws {
        let peer = try await SharedPeer.websockets.get()
        let path = PeerProcess.tagged("/echo")
        let client = try await WebSocketClient.connect(
            to: GatewayEndpoint(parsing: "ws://127.0.0.1:\(peer.port)\(path)"), options: .init(), logger: logger)
        try await client.send(text: "hello, gateway ✓")
        #expect(try await client.receive() == .text("hello, gateway ✓"))
        let blob = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try await client.setMaxMessageSize(100_000)
        try await client.send(binary: blob)
        #expect(try await client.receive() == .binary(blob))
        await client.close()
        #expect(await peer.waitForLine(startingWith: "CLOSE \(path) ") == "CLOSE \(path) 1000")
    }

    @Test func `text and binary messages echo over wss with the pinned fingerprint`() async throws {
        let peer = try await SharedPeer.tls.get()
        let path = PeerProcess.tagged("/echo")
        let pin = try #require(peer.info.fingerprint)
        let client = try await WebSocketClient.connect(
            to: GatewayEndpoint(parsing: "wss://127.0.0.1:\(peer.port)\(path)"),
            options: .init(tlsPinSHA256: pin), logger: logger)
        #expect(client.peerCertificateSHA256 == pin)
        try await client.send(text: "over tls")
        #expect(try await client.receive() == .text("over tls"))
        try await client.send(binary: [1, 2, 3])
        #expect(try await client.receive() == .binary([1, 2, 3]))
        await client.close()
        #expect(await peer.waitForLine(startingWith: "CLOSE \(path) ") == "CLOSE \(path) 1000")
    }
}
