/// A plain TCP connection (POSIX sockets, IPv4 or IPv6) served by its own I/O thread.
package struct TCPByteStream: ByteStream {
    private let owner: SocketIOThread.Owner
    /// The address the socket is connected to.
    package let peer: SocketAddress

    /// Resolves `host` and connects within `timeout`, only ever to addresses `allowed` accepts (when given).
    package static func connect(
        host: String, port: Int, timeout: Duration, resolver: HostResolver = .system,
        allowed: (@Sendable (SocketAddress) -> Bool)? = nil
    ) async throws -> TCPByteStream {
        let (engine, peer) = try await SocketIOThread.start(name: "tcp \(host):\(port)", timeout: timeout) {
            waiter throws(TransportError) in
            let (fd, peer) = try TCPConnector.connect(host: host, port: port, waiter: waiter, resolver: resolver, allowed: allowed)
            return (PlainSocketIO(fileDescriptor: fd), peer)
        }
        return TCPByteStream(owner: SocketIOThread.Owner(engine), peer: peer)
    }

    package func read(maxBytes: Int) async throws -> [UInt8] { try await owner.engine.read(maxBytes: maxBytes) }
    package func write(_ bytes: [UInt8]) async throws { try await owner.engine.write(bytes) }
    package func close() async { await owner.engine.close() }
}
