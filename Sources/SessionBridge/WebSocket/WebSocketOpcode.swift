/// The four-bit opcode of a WebSocket frame (RFC 6455 section 5.2).
package struct WebSocketOpcode: Sendable, Hashable, CustomStringConvertible {
    /// The raw four-bit value.
    package let rawValue: UInt8

    /// Makes an opcode from its four-bit value; `nil` when the value does not fit in four bits.
    package init?(encodedWebSocketOpcode value: UInt8) {
        guard value < 0x10 else { return nil }
        self.rawValue = value
    }

    private init(_ value: UInt8) { self.rawValue = value }

    package static let continuation = WebSocketOpcode(0x0)
    package static let text = WebSocketOpcode(0x1)
    package static let binary = WebSocketOpcode(0x2)
    package static let connectionClose = WebSocketOpcode(0x8)
    package static let ping = WebSocketOpcode(0x9)
    package static let pong = WebSocketOpcode(0xA)

    /// Control frames (close, ping, pong and the reserved 0xB-0xF) may not be fragmented and carry at most 125 bytes.
    package var isControlOpcode: Bool { rawValue & 0x8 != 0 }

    /// Whether RFC 6455 defines this opcode; the reserved ones are a protocol error when received.
    package var isKnown: Bool { [0x0, 0x1, 0x2, 0x8, 0x9, 0xA].contains(rawValue) }

    package var description: String {
        switch rawValue {
        case 0x0: "continuation"
        case 0x1: "text"
        case 0x2: "binary"
        case 0x8: "close"
        case 0x9: "ping"
        case 0xA: "pong"
        default: "reserved(0x\(String(rawValue, radix: 16)))"
        }
    }
}
