extension WebSocketClient {
    /// How to connect: trust, limits, timeouts and extra upgrade headers.
    package struct Options: Sendable {
        /// SHA-256 of the server's leaf certificate (DER). Any common form is accepted (`sha256:` prefix,
        /// colons, upper case); when set it must match exactly and the chain need not be trusted.
        package var tlsPinSHA256: String?
        /// Bound on TCP connect, TLS handshake and WebSocket upgrade together.
        package var connectTimeout: Duration = .seconds(10)
        /// The largest incoming message: 64 KiB before `hello-ok`, then raise to `policy.maxPayload`.
        package var maxMessageSize: Int = 65_536
        /// The most fragments one incoming message may arrive in.
        package var maxFragmentCount: Int = 4_096
        /// Headers added to the upgrade request (e.g. access-proxy credentials). Callers decide whether
        /// they may go over plaintext; gateway-protocol.md 3.4 sends them only on `wss://`.
        package var extraHeaders: [WebSocketHeader] = []
        /// An extra PEM file of trust anchors, on top of the system store (tests, private CAs).
        package var caFile: String?
        /// How long `close()` waits for the server's close frame.
        package var closeTimeout: Duration = .seconds(2)
        /// How host names become addresses (tests swap it; address literals never reach DNS).
        package var resolver: HostResolver = .system

        /// Options with the defaults.
        package init(
            tlsPinSHA256: String? = nil, connectTimeout: Duration = .seconds(10), maxMessageSize: Int = 65_536,
            extraHeaders: [WebSocketHeader] = [], caFile: String? = nil
        ) {
            self.tlsPinSHA256 = tlsPinSHA256
            self.connectTimeout = connectTimeout
            self.maxMessageSize = maxMessageSize
            self.extraHeaders = extraHeaders
            self.caFile = caFile
        }
    }
}
