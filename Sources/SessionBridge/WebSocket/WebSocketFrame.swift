/// One WebSocket frame, as NIOWebSocket models it: header bits, opcode, optional mask and payload.
package struct WebSocketFrame: Sendable, Equatable {
    package var fin: Bool
    package var rsv1: Bool
    package var rsv2: Bool
    package var rsv3: Bool
    package var opcode: WebSocketOpcode
    /// The key the payload is masked with on the wire, if any (clients always mask; servers never do).
    package var maskKey: WebSocketMaskingKey?
    /// The payload as it appears on the wire (still masked when `maskKey` is set).
    package var data: [UInt8]

    /// Makes a frame; `data` is taken to be on-the-wire bytes.
    package init(
        fin: Bool = true, rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false,
        opcode: WebSocketOpcode, maskKey: WebSocketMaskingKey? = nil, data: [UInt8] = []
    ) {
        self.fin = fin
        self.rsv1 = rsv1
        self.rsv2 = rsv2
        self.rsv3 = rsv3
        self.opcode = opcode
        self.maskKey = maskKey
        self.data = data
    }

    /// The payload with the mask removed.
    package var unmaskedData: [UInt8] {
        guard let maskKey else { return data }
        var copy = data
        maskKey.apply(to: &copy)
        return copy
    }
}
