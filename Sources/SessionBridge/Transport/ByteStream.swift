/// A connected, ordered, reliable byte stream: the seam between the WebSocket layer and the transport
/// (TCP, TLS over TCP, or an in-memory pair in tests), as NIOCore's channel is to NIOPosix.
package protocol ByteStream: Sendable {
    /// Waits for received bytes (at most `maxBytes`); an empty array means the peer closed the stream.
    /// Cancelling the calling task ends the wait with `CancellationError` without losing data.
    func read(maxBytes: Int) async throws -> [UInt8]
    /// Queues `bytes` in call order and waits until all are handed to the kernel (or TLS).
    func write(_ bytes: [UInt8]) async throws
    /// Closes the stream; pending reads and writes fail. Idempotent.
    func close() async
}
