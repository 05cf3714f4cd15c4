import COpenSSL
import Synchronization

/// Process-wide OpenSSL client contexts, one per trust configuration. Loading the system trust store
/// (Debian's `cert.pem`, about 140 certificates) takes 40-60 ms, so it is done once, not per connect.
/// An `SSL_CTX` may be shared by connections on several threads; each connection gets its own `SSL`.
enum TLSContextCache {
    enum Trust: Hashable {
        /// No trust store: a pin decides, or nothing does (the fingerprint probe).
        case none
        /// The system store plus an optional extra PEM file.
        case system(caFile: String?)
    }

    /// Contexts live until the process ends: there are only as many as trust configurations used.
    private static let contexts = Mutex<[Trust: Int]>([:])

    /// The shared context for `trust`, made on first use.
    static func context(for trust: Trust) throws(TransportError) -> OpaquePointer {
        // Stored as the pointer's bit pattern: a plain integer crosses the lock without Sendable issues.
        if let cached = contexts.withLock({ $0[trust] }), let pointer = OpaquePointer(bitPattern: cached) {
            return pointer
        }
        let made = try make(trust)
        let winner = contexts.withLock { cache -> Int in
            if let existing = cache[trust] { return existing }
            cache[trust] = Int(bitPattern: made)
            return Int(bitPattern: made)
        }
        if winner != Int(bitPattern: made) { SSL_CTX_free(made) }
        guard let pointer = OpaquePointer(bitPattern: winner) else {
            throw .tlsHandshakeFailed(reason: "no TLS context")
        }
        return pointer
    }

    private static func make(_ trust: Trust) throws(TransportError) -> OpaquePointer {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw .tlsHandshakeFailed(reason: "SSL_CTX_new: \(TLSSocketIO.errorQueueText())")
        }
        _ = cssl_ctx_set_min_tls12(context)
        cssl_ctx_ignore_unexpected_eof(context)
        // Verification runs and is recorded, but never aborts the handshake: TLSSocketIO applies the
        // policy afterwards, with the fingerprint in hand for every outcome.
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        if case .system(let caFile) = trust {
            SSL_CTX_set_default_verify_paths(context)
            if let caFile, SSL_CTX_load_verify_locations(context, caFile, nil) != 1 {
                SSL_CTX_free(context)
                throw .caFileUnreadable(path: caFile, reason: TLSSocketIO.errorQueueText())
            }
        }
        return context
    }
}
