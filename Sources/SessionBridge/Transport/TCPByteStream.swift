/// A plain TCP connection (POSIX sockets, IPv4 or IPv6) served by its own I/O thread.
package struct TCPByteStream: ByteStream {
    private let owner: SocketIOThread.Owner

    /// Resolves `host` and connects within `timeout`.
    package static func connect(host: String, port: Int, timeout: Duration) async throws -> TCPByteStream {
        let (engine, _) = try await SocketIOThread.start(name: "tcp \(host):\(port)", timeout: timeout) {
            waiter throws(TransportError) in
            let fd = try TCPConnector.connect(host: host, port: port, waiter: waiter)
            return (PlainSocketIO(fileDescriptor: fd), ())
        }
        return TCPByteStream(owner: SocketIOThread.Owner(engine))
    }

    package func read(maxBytes: Int) async throws -> [UInt8] { try await owner.engine.read(maxBytes: maxBytes) }
    package func write(_ bytes: [UInt8]) async throws { try await owner.engine.write(bytes) }
    package func close() async { await owner.engine.close() }
}
