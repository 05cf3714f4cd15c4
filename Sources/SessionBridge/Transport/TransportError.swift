/// Why a connection to a Gateway could not be made or kept, below the WebSocket layer.
package enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The Gateway URL could not be parsed.
    case invalidEndpoint(text: String, reason: String)
    /// `ws://` to a host that is not local; refused before any connection is made.
    case plaintextNotAllowed(host: String)
    /// `ws://` to a name whose address is not local: refused before connecting to it (or, if the socket's
    /// peer turned out to be elsewhere, before sending anything).
    case plaintextPeerNotAllowed(host: String, address: String)
    /// The host name did not resolve.
    case resolveFailed(host: String, reason: String)
    /// No address of the host accepted a TCP connection.
    case connectFailed(host: String, port: Int, reason: String)
    /// A connection step did not finish in time (`stage`: TCP connect, TLS handshake, WebSocket upgrade).
    case timedOut(host: String, port: Int, stage: String)
    /// The TLS handshake failed for a reason other than trust.
    case tlsHandshakeFailed(reason: String)
    /// The certificate is not trusted by the system (or the extra CA file) and no pin was given.
    case untrustedCertificate(host: String, fingerprint: String, reason: String)
    /// The certificate's SHA-256 differs from the pinned one.
    case pinMismatch(expected: String, actual: String)
    /// The pin given is not 64 hex digits after normalisation.
    case invalidPin(String)
    /// The extra CA file could not be loaded.
    case caFileUnreadable(path: String, reason: String)
    /// An extra upgrade header has an invalid name or a line break in its value.
    case invalidHeader(name: String)
    /// Reading or writing failed after the connection was up.
    case ioFailed(reason: String)
    /// The stream was closed locally and cannot be used any more.
    case streamClosed

    package var description: String {
        switch self {
        case .invalidEndpoint(let text, let reason):
            "\"\(text)\" is not a Gateway URL: \(reason)."
        case .plaintextNotAllowed(let host):
            "Refusing plaintext ws:// to \(host): it is not a loopback, private, link-local or .local host. "
                + "Use wss://\(host) instead."
        case .plaintextPeerNotAllowed(let host, let address):
            "Refusing plaintext ws:// to \(host): it resolves to \(address), which is not a loopback, private or "
                + "link-local address, so the token would cross other networks unencrypted. Use wss:// instead."
        case .resolveFailed(let host, let reason):
            "Could not resolve \(host): \(reason). Check the host name and your network."
        case .connectFailed(let host, let port, let reason):
            "Could not connect to \(host):\(port): \(reason). Is the Gateway running and reachable?"
        case .timedOut(let host, let port, let stage):
            "\(stage) to \(host):\(port) timed out. Is the Gateway running and reachable?"
        case .tlsHandshakeFailed(let reason):
            "The TLS handshake with the Gateway failed: \(reason). Does it serve wss:// on this port?"
        case .untrustedCertificate(let host, let fingerprint, let reason):
            "The certificate of \(host) is not trusted (\(reason)). Its SHA-256 fingerprint is \(fingerprint); "
                + "verify it out of band, then trust it with --trust \(fingerprint)."
        case .pinMismatch(let expected, let actual):
            "The Gateway's certificate does not match the pinned fingerprint: expected \(expected), got \(actual). "
                + "Connection refused; if the Gateway's certificate really changed, pin the new fingerprint."
        case .invalidPin(let text):
            "\"\(text)\" is not a SHA-256 fingerprint (64 hex digits, colons allowed)."
        case .caFileUnreadable(let path, let reason):
            "Could not load CA certificates from \(path): \(reason)."
        case .invalidHeader(let name):
            "The upgrade header \"\(name)\" is not a valid HTTP header."
        case .ioFailed(let reason):
            "The connection to the Gateway failed: \(reason)."
        case .streamClosed:
            "The connection was already closed."
        }
    }
}
