/// Reassembles fragmented data frames into messages, enforcing a size and a fragment-count limit.
/// Control frames never reach it: they may arrive between fragments and are handled by the connection.
package struct WebSocketFrameAggregator: Sendable {
    /// The largest message accepted, in payload bytes.
    package var maxMessageSize: Int
    /// The most fragments one message may arrive in.
    package var maxFragmentCount: Int

    private var opcode: WebSocketOpcode?
    private var buffered: [UInt8] = []
    private var fragmentCount = 0

    /// Makes an aggregator with its limits.
    package init(maxMessageSize: Int, maxFragmentCount: Int = 4096) {
        self.maxMessageSize = maxMessageSize
        self.maxFragmentCount = maxFragmentCount
    }

    /// How many more payload bytes the message in progress (or the next one) may carry: the decoder's
    /// frame limit, so an oversized frame is refused from its header.
    package var remainingCapacity: Int { max(0, maxMessageSize - buffered.count) }

    /// Adds an unmasked data frame; returns the message once its last fragment is in.
    package mutating func append(_ frame: WebSocketFrame) throws(WebSocketError) -> WebSocketMessage? {
        if frame.opcode == .continuation {
            guard opcode != nil else { throw .unexpectedContinuationFrame }
        } else {
            guard opcode == nil else { throw .expectedContinuationFrame }
            opcode = frame.opcode
        }
        fragmentCount += 1
        guard fragmentCount <= maxFragmentCount else { throw .tooManyFragments(limit: maxFragmentCount) }
        guard frame.data.count <= remainingCapacity else { throw .messageTooLarge(limit: maxMessageSize) }
        buffered.append(contentsOf: frame.data)
        guard frame.fin, let kind = opcode else { return nil }

        let payload = buffered
        opcode = nil
        buffered = []
        fragmentCount = 0
        if kind == .text {
            guard let text = String(validating: payload, as: UTF8.self) else { throw .invalidUTF8 }
            return .text(text)
        }
        return .binary(payload)
    }
}
