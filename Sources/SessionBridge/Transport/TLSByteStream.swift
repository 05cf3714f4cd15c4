/// A TLS connection over TCP (OpenSSL 3) served by its own I/O thread. Trust: the pin if one is given,
/// otherwise the system store (plus an optional CA file) with host-name verification and SNI.
package struct TLSByteStream: ByteStream {
    private let owner: SocketIOThread.Owner
    /// Lowercase hex SHA-256 of the server's leaf certificate (DER).
    package let peerCertificateSHA256: String
    /// The address the socket is connected to.
    package let peer: SocketAddress

    /// Connects and completes the handshake within `timeout`. `pin` must already be normalised
    /// (`CertificateFingerprint.normalize`).
    package static func connect(
        host: String, port: Int, pin: String?, caFile: String?, timeout: Duration, resolver: HostResolver = .system
    ) async throws -> TLSByteStream {
        let (engine, info) = try await SocketIOThread.start(name: "tls \(host):\(port)", timeout: timeout) {
            waiter throws(TransportError) in
            let (fd, peer) = try TCPConnector.connect(host: host, port: port, waiter: waiter, resolver: resolver)
            let (io, fingerprint) = try TLSSocketIO.handshake(
                fileDescriptor: fd, host: host, port: port, policy: .verify(pin: pin, caFile: caFile), waiter: waiter)
            return (io, (fingerprint, peer))
        }
        return TLSByteStream(owner: SocketIOThread.Owner(engine), peerCertificateSHA256: info.0, peer: info.1)
    }

    package func read(maxBytes: Int) async throws -> [UInt8] { try await owner.engine.read(maxBytes: maxBytes) }
    package func write(_ bytes: [UInt8]) async throws { try await owner.engine.write(bytes) }
    package func close() async { await owner.engine.close() }
}

/// Connects to `host:port` with TLS, accepting any certificate, and returns the SHA-256 of the leaf
/// certificate's DER in lowercase hex, for a "Trust and connect?" prompt. Nothing is sent beyond the handshake.
package func probeCertificateFingerprint(host: String, port: Int, timeout: Duration) async throws -> String {
    let (engine, fingerprint) = try await SocketIOThread.start(name: "tls probe \(host):\(port)", timeout: timeout) {
        waiter throws(TransportError) in
        let (fd, _) = try TCPConnector.connect(host: host, port: port, waiter: waiter)
        return try TLSSocketIO.handshake(fileDescriptor: fd, host: host, port: port, policy: .probe, waiter: waiter)
    }
    await engine.close()
    return fingerprint
}
