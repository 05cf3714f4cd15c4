/// Turns received bytes into frames with an explicit state machine (NIOWebSocket's six states).
///
/// Every header is validated before its payload is waited for, so a frame declaring more than
/// `maxPayloadLength` bytes fails at once and the excess is never buffered: the buffer holds at most
/// one permitted frame plus one read's worth of bytes.
package struct WebSocketFrameDecoder: Sendable {
    /// What one parse step achieved.
    package enum ParseResult: Sendable, Equatable {
        /// More bytes are needed before anything else can happen.
        case insufficientData
        /// A header field was consumed; call `parseStep()` again.
        case continueParsing
        /// A whole frame was decoded.
        case result(WebSocketFrame)
    }

    private enum State: Sendable {
        case idle
        case firstByteReceived(firstByte: UInt8)
        case waitingForLengthWord(firstByte: UInt8, masked: Bool)
        case waitingForLengthQWord(firstByte: UInt8, masked: Bool)
        case waitingForMask(firstByte: UInt8, length: Int)
        case waitingForData(firstByte: UInt8, length: Int, maskKey: WebSocketMaskingKey?)
    }

    /// The largest data-frame payload accepted; the client lowers it to what is left of the message limit.
    package var maxPayloadLength: Int
    /// Servers never mask, so a client rejects masked frames; tests decoding client frames turn this off.
    package var rejectsMaskedFrames: Bool

    private var state: State = .idle
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// The most bytes ever held at once, so tests can show oversized input is not buffered.
    package private(set) var peakBufferedByteCount = 0

    /// Makes a decoder with a payload limit.
    package init(maxPayloadLength: Int, rejectsMaskedFrames: Bool = true) {
        self.maxPayloadLength = maxPayloadLength
        self.rejectsMaskedFrames = rejectsMaskedFrames
    }

    /// Bytes received but not yet decoded.
    package var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds received bytes.
    package mutating func append(_ bytes: some Collection<UInt8>) {
        if readIndex > 0 && readIndex >= buffer.count / 2 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
        peakBufferedByteCount = max(peakBufferedByteCount, bufferedByteCount)
    }

    /// Decodes the next whole frame from the buffered bytes, or returns `nil` when more are needed.
    package mutating func nextFrame() throws(WebSocketError) -> WebSocketFrame? {
        while true {
            switch try parseStep() {
            case .insufficientData: return nil
            case .continueParsing: continue
            case .result(let frame): return frame
            }
        }
    }

    /// Advances the state machine by one header field or one payload.
    package mutating func parseStep() throws(WebSocketError) -> ParseResult {
        switch state {
        case .idle:
            guard let first = take(1) else { return .insufficientData }
            try validateFirstByte(first[0])
            state = .firstByteReceived(firstByte: first[0])
            return .continueParsing

        case .firstByteReceived(let firstByte):
            guard let second = take(1) else { return .insufficientData }
            let masked = second[0] & 0x80 != 0
            if masked && rejectsMaskedFrames { throw .maskedFrameFromServer }
            switch second[0] & 0x7F {
            case 126: state = .waitingForLengthWord(firstByte: firstByte, masked: masked)
            case 127: state = .waitingForLengthQWord(firstByte: firstByte, masked: masked)
            case let short: try enterPayloadState(firstByte: firstByte, masked: masked, length: UInt64(short))
            }
            return .continueParsing

        case .waitingForLengthWord(let firstByte, let masked):
            guard let word = take(2) else { return .insufficientData }
            try enterPayloadState(firstByte: firstByte, masked: masked, length: UInt64(word[0]) << 8 | UInt64(word[1]))
            return .continueParsing

        case .waitingForLengthQWord(let firstByte, let masked):
            guard let qword = take(8) else { return .insufficientData }
            let length = qword.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            try enterPayloadState(firstByte: firstByte, masked: masked, length: length)
            return .continueParsing

        case .waitingForMask(let firstByte, let length):
            guard let key = take(4) else { return .insufficientData }
            state = .waitingForData(firstByte: firstByte, length: length, maskKey: WebSocketMaskingKey(key))
            return .continueParsing

        case .waitingForData(let firstByte, let length, let maskKey):
            guard let payload = take(length) else { return .insufficientData }
            state = .idle
            return .result(
                WebSocketFrame(
                    fin: firstByte & 0x80 != 0, rsv1: firstByte & 0x40 != 0, rsv2: firstByte & 0x20 != 0,
                    rsv3: firstByte & 0x10 != 0, opcode: Self.opcode(of: firstByte), maskKey: maskKey,
                    data: payload))
        }
    }

    private static func opcode(of firstByte: UInt8) -> WebSocketOpcode {
        WebSocketOpcode(encodedWebSocketOpcode: firstByte & 0x0F) ?? .continuation
    }

    private func validateFirstByte(_ byte: UInt8) throws(WebSocketError) {
        if byte & 0x70 != 0 { throw .reservedBitsSet }
        let opcode = Self.opcode(of: byte)
        guard opcode.isKnown else { throw .unknownOpcode(opcode.rawValue) }
        if opcode.isControlOpcode && byte & 0x80 == 0 { throw .fragmentedControlFrame }
    }

    /// The length check happens here, before any payload byte is waited for.
    private mutating func enterPayloadState(firstByte: UInt8, masked: Bool, length: UInt64) throws(WebSocketError) {
        if Self.opcode(of: firstByte).isControlOpcode {
            guard length <= 125 else { throw .multiByteControlFrameLength(length: length) }
        } else if length > UInt64(max(0, maxPayloadLength)) {
            throw .invalidFrameLength(length: length, limit: maxPayloadLength)
        }
        let size = Int(length)
        state = masked ? .waitingForMask(firstByte: firstByte, length: size)
            : .waitingForData(firstByte: firstByte, length: size, maskKey: nil)
    }

    private mutating func take(_ count: Int) -> [UInt8]? {
        guard bufferedByteCount >= count else { return nil }
        defer { readIndex += count }
        return Array(buffer[readIndex..<readIndex + count])
    }
}
