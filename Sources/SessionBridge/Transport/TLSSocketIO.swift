import COpenSSL
import Glibc

/// A TLS session over a connected non-blocking socket, with OpenSSL 3.
///
/// The handshake always completes with verification recorded rather than enforced
/// (`SSL_VERIFY_NONE`), so the leaf certificate's fingerprint is available for every outcome; the
/// policy is then applied here: a pin must match exactly (a self-signed Gateway is then fine),
/// otherwise the chain must verify against the system store (plus `caFile`) including the host name.
final class TLSSocketIO: SocketIO {
    /// How the peer's certificate is judged.
    enum Policy {
        /// A pin if given, else system trust with host-name verification.
        case verify(pin: String?, caFile: String?)
        /// Accept any certificate: only to read its fingerprint for a trust prompt.
        case probe

        /// With a pin the trust store is irrelevant, so it is not loaded at all.
        var trust: TLSContextCache.Trust {
            switch self {
            case .verify(let pin?, _): .none
            case .verify(nil, let caFile): .system(caFile: caFile)
            case .probe: .none
            }
        }
    }

    let fileDescriptor: Int32
    private let ssl: OpaquePointer

    private init(fileDescriptor: Int32, ssl: OpaquePointer) {
        self.fileDescriptor = fileDescriptor
        self.ssl = ssl
    }

    /// Runs the handshake on `fileDescriptor` (which it takes ownership of, also on failure) and applies
    /// `policy`; returns the session and the leaf certificate's SHA-256 in lowercase hex.
    static func handshake(
        fileDescriptor: Int32, host: String, port: Int, policy: Policy, waiter: SocketWaiter
    ) throws(TransportError) -> (TLSSocketIO, String) {
        let context: OpaquePointer
        let ssl: OpaquePointer
        do throws(TransportError) {
            context = try TLSContextCache.context(for: policy.trust)
            guard let made = SSL_new(context) else {
                throw .tlsHandshakeFailed(reason: "SSL_new: \(Self.errorQueueText())")
            }
            ssl = made
        } catch {
            close(fileDescriptor)
            throw error
        }
        let session = TLSSocketIO(fileDescriptor: fileDescriptor, ssl: ssl)
        do throws(TransportError) {
            try session.configure(host: host)
            try session.runHandshake(host: host, port: port, waiter: waiter)
            let fingerprint = try session.peerFingerprint()
            try session.judge(fingerprint: fingerprint, host: host, policy: policy)
            return (session, fingerprint)
        } catch {
            session.release()
            throw error
        }
    }

    /// Sets SNI and the name or address the certificate must carry. A failure here would otherwise leave
    /// the chain checked but the host unchecked, so it is refused.
    private func configure(host: String) throws(TransportError) {
        cssl_set_io_modes(ssl)
        guard SSL_set_fd(ssl, fileDescriptor) == 1 else {
            throw .tlsHandshakeFailed(reason: "SSL_set_fd: \(Self.errorQueueText())")
        }
        if let address = Self.verifiableAddress(host) {
            // RFC 6066: no SNI for address literals; the address must be in the certificate's IP SANs.
            // An IPv6 zone (fe80::1%eth0) picks the interface and is not part of the certificate's address.
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), address) == 1 else {
                throw .tlsHandshakeFailed(reason: "the address \(host) cannot be checked against the certificate")
            }
        } else {
            guard SSL_set1_host(ssl, host) == 1 else {
                throw .tlsHandshakeFailed(reason: "the host name \(host) cannot be checked against the certificate")
            }
            guard cssl_set_sni(ssl, host) == 1 else {
                throw .tlsHandshakeFailed(reason: "SNI for \(host): \(Self.errorQueueText())")
            }
        }
        SSL_set_connect_state(ssl)
    }

    /// The address to verify when `host` is an address literal (zone and trailing dot dropped), else nil.
    static func verifiableAddress(_ host: String) -> String? {
        var h = host
        if h.hasSuffix(".") { h.removeLast() }
        guard IPAddress(h) != nil else { return nil }
        return h.split(separator: "%", maxSplits: 1).first.map(String.init)
    }

    private func runHandshake(host: String, port: Int, waiter: SocketWaiter) throws(TransportError) {
        while true {
            ERR_clear_error()
            let result = SSL_connect(ssl)
            if result == 1 { return }
            let wait: SocketWait
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ: wait = .readable
            case SSL_ERROR_WANT_WRITE: wait = .writable
            case SSL_ERROR_SYSCALL:
                let reason = errno == 0 ? "the server closed the connection" : String(cString: strerror(errno))
                throw .tlsHandshakeFailed(reason: reason)
            default:
                throw .tlsHandshakeFailed(reason: Self.errorQueueText())
            }
            switch waiter.wait(for: fileDescriptor, wait) {
            case .ready: continue
            case .timedOut: throw .timedOut(host: host, port: port, stage: "TLS handshake")
            case .aborted: throw .streamClosed
            }
        }
    }

    private func peerFingerprint() throws(TransportError) -> String {
        guard let certificate = SSL_get1_peer_certificate(ssl) else {
            throw .tlsHandshakeFailed(reason: "the server presented no certificate")
        }
        defer { X509_free(certificate) }
        let length = i2d_X509(certificate, nil)
        guard length > 0 else { throw .tlsHandshakeFailed(reason: "the certificate could not be encoded") }
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_X509(certificate, &cursor)
        }
        return Digest.hex(Digest.sha256(der))
    }

    private func judge(fingerprint: String, host: String, policy: Policy) throws(TransportError) {
        guard case .verify(let pin, _) = policy else { return }
        if let pin {
            guard pin == fingerprint else { throw .pinMismatch(expected: pin, actual: fingerprint) }
            return
        }
        let result = SSL_get_verify_result(ssl)
        guard result == X509_V_OK else {
            let reason = String(cString: X509_verify_cert_error_string(result))
            throw .untrustedCertificate(host: host, fingerprint: fingerprint, reason: reason)
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> SocketIOResult {
        ERR_clear_error()
        let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if count > 0 { return .transferred(Int(count)) }
        return classify(count)
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> SocketIOResult {
        ERR_clear_error()
        let count = SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        if count > 0 { return .transferred(Int(count)) }
        return classify(count)
    }

    private func classify(_ result: Int32) -> SocketIOResult {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: return .wouldBlock(.readable)
        case SSL_ERROR_WANT_WRITE: return .wouldBlock(.writable)
        case SSL_ERROR_ZERO_RETURN: return .endOfStream
        case SSL_ERROR_SYSCALL:
            if errno == 0 { return .endOfStream }
            return .failed(String(cString: strerror(errno)))
        default: return .failed("TLS: \(Self.errorQueueText())")
        }
    }

    func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
    }

    func release() {
        SSL_free(ssl)
        _ = Glibc.close(fileDescriptor)
    }

    /// OpenSSL's error queue as text, oldest first.
    static func errorQueueText() -> String {
        var parts: [String] = []
        while true {
            let code = ERR_get_error()
            guard code != 0 else { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let text = buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
            parts.append(String(decoding: text, as: UTF8.self))
        }
        return parts.isEmpty ? "unknown error" : parts.joined(separator: "; ")
    }
}
