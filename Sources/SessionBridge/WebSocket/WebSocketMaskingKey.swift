import COpenSSL

/// The four-byte key a client XORs over every frame payload it sends (RFC 6455 section 5.3).
package struct WebSocketMaskingKey: Sendable, Hashable {
    /// The key bytes in wire order.
    package let bytes: (UInt8, UInt8, UInt8, UInt8)

    /// Makes a key from exactly four bytes; `nil` otherwise.
    package init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == 4 else { return nil }
        let a = Array(bytes)
        self.bytes = (a[0], a[1], a[2], a[3])
    }

    /// A key from OpenSSL's CSPRNG: RFC 6455 requires keys an intermediary cannot predict.
    package static func random() -> WebSocketMaskingKey {
        var raw = [UInt8](repeating: 0, count: 4)
        if RAND_bytes(&raw, 4) != 1 {
            // RAND_bytes fails only when the system has no entropy source; fall back to the stdlib generator.
            var generator = SystemRandomNumberGenerator()
            raw = (0..<4).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        }
        return WebSocketMaskingKey(raw) ?? WebSocketMaskingKey(zero: ())
    }

    private init(zero: Void) { self.bytes = (0, 0, 0, 0) }

    /// The key as an array, for the wire.
    package var array: [UInt8] { [bytes.0, bytes.1, bytes.2, bytes.3] }

    /// XORs the key over `data` in place; applying it twice restores the data.
    package func apply(to data: inout [UInt8]) {
        let key = array
        data.withUnsafeMutableBufferPointer { buffer in
            for index in buffer.indices { buffer[index] ^= key[index & 3] }
        }
    }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.array == rhs.array }
    package func hash(into hasher: inout Hasher) { hasher.combine(array) }
}
