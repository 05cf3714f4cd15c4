/// One open message channel to the Gateway (a WebSocket in production, an in-memory pair in tests).
/// `receive()` returns each message's bytes, text or binary alike (the Gateway's JSON may come as either).
package protocol GatewayTransport: Sendable {
    func send(text: String) async throws
    func receive() async throws -> [UInt8]
    func ping() async throws
    /// Raises the incoming message limit (64 KiB before `hello-ok`, then `policy.maxPayload`).
    func setMaxMessageSize(_ bytes: Int) async
    /// Closes the channel; a pending `receive()` must then throw.
    func close() async
    /// Whether the connected socket's peer is this machine (the address reached, not the name written).
    var peerIsLoopback: Bool { get }
}

extension GatewayTransport {
    package var peerIsLoopback: Bool { false }
}

/// A transport failure classified for the reconnect logic: permanent ones (a certificate pin mismatch,
/// an untrusted certificate, plaintext to a public host) stop reconnecting; the rest are retried.
package struct TransportFailure: Error, CustomStringConvertible {
    package var message: String
    package var isPermanent: Bool
    package var underlying: any Error

    package init(_ underlying: any Error, isPermanent: Bool) {
        self.underlying = underlying
        self.isPermanent = isPermanent
        message = String(describing: underlying)
    }

    package var description: String { message }
}
