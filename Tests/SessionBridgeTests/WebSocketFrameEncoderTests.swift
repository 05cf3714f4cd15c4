import Testing

@testable import SessionBridge

@Suite struct WebSocketFrameEncoderTests {
    @Test(arguments: [0, 1, 125, 126, 65_535, 65_536, 200_000])
    func `client frames are masked and decode back to the payload`(length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        let bytes = WebSocketFrameEncoder.encodeClientFrame(opcode: .binary, payload: payload)
        #expect(bytes[1] & 0x80 != 0, "mask bit set")
        let headerLength = 2 + (length < 126 ? 0 : length < 65_536 ? 2 : 8) + 4
        #expect(bytes.count == headerLength + length)
        if length >= 16 {
            #expect(Array(bytes[headerLength...]) != payload, "payload on the wire is masked")
        }
        var decoder = WebSocketFrameDecoder(maxPayloadLength: 1 << 20, rejectsMaskedFrames: false)
        decoder.append(bytes)
        let frame = try #require(try decoder.nextFrame())
        #expect(frame.maskKey != nil && frame.fin && frame.opcode == .binary)
        #expect(frame.unmaskedData == payload)
    }

    @Test func `every frame gets a fresh random masking key`() {
        let keys = (0..<64).map { _ in
            Array(WebSocketFrameEncoder.encodeClientFrame(opcode: .text, payload: [1])[2..<6])
        }
        #expect(Set(keys).count > 60)
    }

    @Test func `the RFC 6455 masked example encodes as the RFC shows`() throws {
        let key = try #require(WebSocketMaskingKey([0x37, 0xfa, 0x21, 0x3d]))
        let bytes = WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .text, maskKey: key, data: Array("Hello".utf8)))
        #expect(bytes == [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58])
    }
}
