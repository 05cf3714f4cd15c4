/// A plain TCP connection (POSIX sockets, IPv4 or IPv6) served by its own I/O thread.
package struct TCPByteStream: ByteStream {
    private let engine: SocketIOThread

    /// Resolves `host` and connects within `timeout`.
    package static func connect(host: String, port: Int, timeout: Duration) async throws -> TCPByteStream {
        let (engine, _) = try await SocketIOThread.start(name: "tcp \(host):\(port)", timeout: timeout) {
            waiter throws(TransportError) in
            let fd = try TCPConnector.connect(host: host, port: port, waiter: waiter)
            return (PlainSocketIO(fileDescriptor: fd), ())
        }
        return TCPByteStream(engine: engine)
    }

    package func read(maxBytes: Int) async throws -> [UInt8] { try await engine.read(maxBytes: maxBytes) }
    package func write(_ bytes: [UInt8]) async throws { try await engine.write(bytes) }
    package func close() async { await engine.close() }
}
