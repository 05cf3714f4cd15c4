import Foundation
import TalkLogging
import TalkTestSupport
import Testing

@testable import SessionBridge

/// A scripted server on the far side of an in-memory byte stream: deterministic control over every byte.
struct ScriptedServer {
    let stream: InMemoryByteStream
    private var decoder = WebSocketFrameDecoder(maxPayloadLength: 1 << 20, rejectsMaskedFrames: false)

    init(_ stream: InMemoryByteStream) { self.stream = stream }

    /// Reads the upgrade request and answers 101 with the right accept value, followed by `extra` bytes.
    func acceptUpgrade(then extra: [UInt8] = []) async throws {
        var request: [UInt8] = []
        while WebSocketHandshake.responseHeadLength(in: request) == nil {
            request += try await stream.read(maxBytes: 4_096)
        }
        let text = String(decoding: request, as: UTF8.self)
        let key = text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) } ?? ""
        let response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: key))\r\n\r\n"
        try await stream.write(Array(response.utf8) + extra)
    }

    /// The next frame the client sent, or `nil` at end of stream.
    mutating func readFrame() async throws -> WebSocketFrame? {
        while true {
            if let frame = try decoder.nextFrame() { return frame }
            let bytes = try await stream.read(maxBytes: 65_536)
            if bytes.isEmpty { return nil }
            decoder.append(bytes)
        }
    }
}

@Suite struct WebSocketClientInMemoryTests {
    static let endpoint = GatewayEndpoint(scheme: .ws, host: "127.0.0.1", port: 18_789)
    let logger = Logger(label: "test.memory")

    func connectPair(options: WebSocketClient.Options = .init(), serverSends extra: [UInt8] = []) async throws
        -> (WebSocketClient, ScriptedServer)
    {
        let (clientSide, serverSide) = InMemoryByteStream.makePair()
        let server = ScriptedServer(serverSide)
        async let accepted: Void = server.acceptUpgrade(then: extra)
        // The upgrade deadline is not under test here, only a net for a broken test: generous, because on a
        // loaded 2-core machine the suites running beside this one can hold the cooperative pool for seconds.
        let client = try await WebSocketClient.upgrade(
            stream: clientSide, endpoint: Self.endpoint, options: options, deadline: .now + .seconds(30), logger: logger)
        try await accepted
        return (client, server)
    }

    @Test func `frames sent in the same packet as the upgrade response are not lost`() async throws {
        let frame = WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .text, data: Array("early".utf8)))
        let (client, _) = try await connectPair(serverSends: frame)
        #expect(try await client.receive() == .text("early"))
    }

    @Test func `an unanswered close ends after the close timeout`() async throws {
        var options = WebSocketClient.Options()
        options.closeTimeout = .milliseconds(200)
        var (client, server) = try await connectPair(options: options)
        let start = ContinuousClock.now
        await client.close(code: .goingAway, reason: "bye")
        let elapsed = ContinuousClock.now - start
        // It waited for the timeout, and then gave up instead of hanging (the upper bound allows for a
        // loaded machine, which has been seen to add more than 2 s).
        #expect(elapsed >= .milliseconds(150) && elapsed < .seconds(10))
        let frame = try #require(try await server.readFrame())
        #expect(frame.opcode == .connectionClose && frame.maskKey != nil)
        #expect(frame.unmaskedData == [0x03, 0xE9] + Array("bye".utf8))
    }

    @Test func `close ends a receive stuck in the middle of a frame`() async throws {
        var options = WebSocketClient.Options()
        options.closeTimeout = .milliseconds(200)
        let (client, server) = try await connectPair(options: options)
        try await server.stream.write([0x81, 100] + Array("only part of it".utf8))
        let pending = Task { try await client.receive() }
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        await client.close()
        await #expect(throws: WebSocketError.closed(code: .normalClosure, reason: "")) { try await pending.value }
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func `pings are answered with the same payload, masked`() async throws {
        var (client, server) = try await connectPair()
        try await server.stream.write(WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .ping, data: [9, 8, 7])))
        try await server.stream.write(WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .text, data: [65])))
        #expect(try await client.receive() == .text("A"))
        let pong = try #require(try await server.readFrame())
        #expect(pong.opcode == .pong && pong.maskKey != nil && pong.unmaskedData == [9, 8, 7])
    }

    static func hostileBytes(_ rng: inout SplitMix64) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 1...6, using: &rng) {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0:  // pure garbage
                bytes += (0..<Int.random(in: 1...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 1:  // a header declaring far more than the limit
                bytes += [0x82, 127, 0, 0, 0, UInt8.random(in: 1...255, using: &rng), 0, 0, 0, 0]
            default:  // a plausible frame with random flaws
                let opcodes: [UInt8] = [0, 1, 2, 8, 9, 10, 3, 11]
                let opcode = opcodes[Int.random(in: 0..<opcodes.count, using: &rng)]
                var payload = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                if Bool.random(using: &rng) { payload = Array(String(repeating: "ok ", count: payload.count / 3).utf8) }
                let frame = WebSocketFrame(
                    fin: Int.random(in: 0..<4, using: &rng) != 0, rsv1: Int.random(in: 0..<20, using: &rng) == 0,
                    opcode: WebSocketOpcode(encodedWebSocketOpcode: opcode) ?? .binary,
                    maskKey: Int.random(in: 0..<20, using: &rng) == 0 ? .random() : nil, data: payload)
                bytes += WebSocketFrameEncoder.encode(frame)
            }
        }
        if Bool.random(using: &rng) { bytes.removeLast(Int.random(in: 0...min(bytes.count, 20), using: &rng)) }
        return bytes
    }

    @Test func `ten thousand hostile byte streams end in a clear error, never a crash or growth`() async throws {
        var rng = SplitMix64(state: 0x0C1A_57A1)
        var outcomes: [String: Int] = [:]
        var options = WebSocketClient.Options(maxMessageSize: 1_024)
        options.closeTimeout = .milliseconds(100)
        for _ in 0..<10_000 {
            let bytes = Self.hostileBytes(&rng)
            let (client, server) = try await connectPair(options: options, serverSends: bytes)
            await server.stream.close()
            var received = 0
            do {
                while received < 1_000 {
                    _ = try await client.receive()
                    received += 1
                }
                Issue.record("a finite stream never ended")
            } catch let error as WebSocketError {
                #expect(!error.description.isEmpty)
                outcomes["\(error)".prefix(40).description, default: 0] += 1
            } catch {
                Issue.record("unexpected error type: \(error)")
            }
            #expect(await client.peakBufferedByteCount <= 1_024 + 65_536 + 14)
        }
        // The corpus reaches many different errors, not one failure mode over and over.
        #expect(outcomes.count >= 8)
    }
}
