import Testing

@testable import SessionBridge

@Suite struct WebSocketFrameDecoderTests {
    /// Frames as a server sends them (unmasked), covering every length encoding.
    static let serverFrames: [WebSocketFrame] = [
        WebSocketFrame(opcode: .text, data: Array("hello".utf8)),
        WebSocketFrame(fin: false, opcode: .binary, data: []),
        WebSocketFrame(opcode: .ping, data: Array(repeating: 0x42, count: 125)),
        WebSocketFrame(fin: false, opcode: .continuation, data: Array(repeating: 7, count: 126)),
        WebSocketFrame(opcode: .pong, data: []),
        WebSocketFrame(opcode: .continuation, data: (0..<65_535).map { UInt8(truncatingIfNeeded: $0) }),
        WebSocketFrame(opcode: .binary, data: (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }),
        WebSocketFrame(opcode: .connectionClose, data: [0x03, 0xE8] + Array("bye".utf8)),
    ]

    enum Feeding: String, CaseIterable {
        case byteAtATime, allAtOnce, oneFramePerBuffer
    }

    @Test(arguments: Feeding.allCases)
    func `frames decode the same however the bytes are split`(feeding: Feeding) throws {
        let encoded = Self.serverFrames.map(WebSocketFrameEncoder.encode)
        let buffers: [[UInt8]] = switch feeding {
        case .byteAtATime: encoded.flatMap { $0 }.map { [$0] }
        case .allAtOnce: [encoded.flatMap { $0 }]
        case .oneFramePerBuffer: encoded
        }
        var decoder = WebSocketFrameDecoder(maxPayloadLength: 1 << 20)
        var decoded: [WebSocketFrame] = []
        for buffer in buffers {
            decoder.append(buffer)
            while let frame = try decoder.nextFrame() { decoded.append(frame) }
        }
        #expect(decoded == Self.serverFrames)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func `a truncated frame waits for more bytes instead of failing`() throws {
        var decoder = WebSocketFrameDecoder(maxPayloadLength: 1_000)
        let bytes = WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .text, data: Array(repeating: 65, count: 300)))
        decoder.append(bytes.dropLast(1))
        #expect(try decoder.nextFrame() == nil)
        decoder.append(bytes.suffix(1))
        #expect(try decoder.nextFrame()?.data.count == 300)
    }

    static let hostileFrames: [(String, [UInt8], WebSocketError)] = [
        ("masked frame", WebSocketFrameEncoder.encode(
            WebSocketFrame(opcode: .text, maskKey: WebSocketMaskingKey([1, 2, 3, 4]), data: [1])), .maskedFrameFromServer),
        ("reserved bit", [0xC1, 0x00], .reservedBitsSet),
        ("reserved opcode", [0x83, 0x00], .unknownOpcode(3)),
        ("reserved control opcode", [0x8B, 0x00], .unknownOpcode(0xB)),
        ("fragmented ping", [0x09, 0x00], .fragmentedControlFrame),
        ("ping of 126 bytes", [0x89, 126, 0x00, 126], .multiByteControlFrameLength(length: 126)),
        ("frame over the limit", [0x82, 127, 0, 0, 0, 0, 0x01, 0, 0, 0], .invalidFrameLength(length: 1 << 24, limit: 65_536)),
        ("length with the top bit set", [0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0],
         .invalidFrameLength(length: 1 << 63, limit: 65_536)),
    ]

    @Test(arguments: hostileFrames)
    func `hostile headers fail before any payload is read`(name: String, bytes: [UInt8], expected: WebSocketError) {
        var decoder = WebSocketFrameDecoder(maxPayloadLength: 65_536)
        decoder.append(bytes)
        #expect(throws: expected, "\(name)") { try decoder.nextFrame() }
    }

    @Test func `an oversized frame is refused from its header, so its payload is never buffered`() throws {
        var decoder = WebSocketFrameDecoder(maxPayloadLength: 1_024)
        decoder.append([0x82, 126, 0x08, 0x00])  // declares 2048 bytes
        #expect(throws: WebSocketError.invalidFrameLength(length: 2_048, limit: 1_024)) { try decoder.nextFrame() }
        #expect(decoder.peakBufferedByteCount == 4)
    }
}
