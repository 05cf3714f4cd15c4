/// Serialises frames for the wire. A client masks every frame it sends (RFC 6455 section 5.3).
package enum WebSocketFrameEncoder {
    /// The wire bytes of `frame`; when it carries a `maskKey`, its `data` is taken as unmasked and masked here.
    package static func encode(_ frame: WebSocketFrame) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(frame.data.count + 14)
        var first = frame.opcode.rawValue
        if frame.fin { first |= 0x80 }
        if frame.rsv1 { first |= 0x40 }
        if frame.rsv2 { first |= 0x20 }
        if frame.rsv3 { first |= 0x10 }
        out.append(first)
        let maskBit: UInt8 = frame.maskKey == nil ? 0 : 0x80
        let length = frame.data.count
        switch length {
        case 0...125:
            out.append(maskBit | UInt8(length))
        case 126...0xFFFF:
            out.append(maskBit | 126)
            out.append(contentsOf: [UInt8(length >> 8), UInt8(length & 0xFF)])
        default:
            out.append(maskBit | 127)
            out.append(contentsOf: (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(length) >> ($0 * 8)) })
        }
        var payload = frame.data
        if let key = frame.maskKey {
            out.append(contentsOf: key.array)
            key.apply(to: &payload)
        }
        out.append(contentsOf: payload)
        return out
    }

    /// A client frame: FIN set, masked with a fresh random key.
    package static func encodeClientFrame(opcode: WebSocketOpcode, payload: [UInt8], fin: Bool = true) -> [UInt8] {
        encode(WebSocketFrame(fin: fin, opcode: opcode, maskKey: .random(), data: payload))
    }
}
