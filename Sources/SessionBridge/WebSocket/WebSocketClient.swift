import TalkLogging

/// An RFC 6455 WebSocket client over a `ByteStream` (TCP or TLS): one actor owns the decoder, the
/// aggregator and the connection state machine; reads and writes go through the stream's I/O thread.
///
/// One task reads with `receive()`; any task may `send` and `ping` meanwhile. Pings from the server are
/// answered inside `receive()`. Every outgoing frame is masked with a fresh random key.
package actor WebSocketClient {
    /// Lowercase hex SHA-256 of the server's leaf certificate (`wss://` only).
    package nonisolated let peerCertificateSHA256: String?
    /// The endpoint this client connected to.
    package nonisolated let endpoint: GatewayEndpoint
    /// The address the socket reached (nil over an in-memory stream).
    package nonisolated let peerAddress: SocketAddress?

    let stream: any ByteStream
    let logger: Logger
    let closeTimeout: Duration
    var decoder: WebSocketFrameDecoder
    var aggregator: WebSocketFrameAggregator
    var stateMachine = WebSocketConnection.StateMachine()
    var receiving = false
    /// Set once the connection is over; every later call reports it.
    var terminalError: (any Error)?
    /// When the last pong arrived, so a keep-alive can tell a live peer from a dead one.
    package internal(set) var lastPongReceivedAt: ContinuousClock.Instant?

    static let readChunkSize = 65_536

    private init(
        stream: any ByteStream, leftover: [UInt8], endpoint: GatewayEndpoint, options: Options,
        peerCertificateSHA256: String?, peerAddress: SocketAddress?, logger: Logger
    ) {
        self.stream = stream
        self.endpoint = endpoint
        self.peerAddress = peerAddress
        self.peerCertificateSHA256 = peerCertificateSHA256
        self.logger = logger
        self.closeTimeout = options.closeTimeout
        self.decoder = WebSocketFrameDecoder(maxPayloadLength: options.maxMessageSize)
        self.aggregator = WebSocketFrameAggregator(
            maxMessageSize: options.maxMessageSize, maxFragmentCount: options.maxFragmentCount)
        self.decoder.append(leftover)
    }

    /// Connects to `endpoint`: refuses plaintext to non-local hosts before any packet is sent (by name, then
    /// by each address the name resolves to, then by the connected socket's peer before the upgrade is
    /// written), then TCP, TLS for `wss://` (pin or system trust), and the upgrade, all within
    /// `options.connectTimeout`.
    package static func connect(to endpoint: GatewayEndpoint, options: Options, logger: Logger) async throws
        -> WebSocketClient
    {
        if endpoint.scheme == .ws && !endpoint.allowsPlaintext {
            throw TransportError.plaintextNotAllowed(host: endpoint.host)
        }
        let pin = try options.tlsPinSHA256.map { text throws(TransportError) in
            try CertificateFingerprint.normalize(text)
        }
        if let bad = options.extraHeaders.first(where: { !$0.isValid }) {
            throw TransportError.invalidHeader(name: bad.name)
        }
        let deadline = ContinuousClock.now + options.connectTimeout
        logger.debug("connecting", metadata: endpoint.logMetadata)
        let stream: any ByteStream
        var fingerprint: String?
        let peer: SocketAddress
        switch endpoint.scheme {
        case .ws:
            let tcp = try await TCPByteStream.connect(
                host: endpoint.host, port: endpoint.port, timeout: options.connectTimeout, resolver: options.resolver,
                allowed: { $0.ip.map(GatewayEndpoint.allowsPlaintext(address:)) ?? false })
            peer = tcp.peer
            stream = tcp
        case .wss:
            let tls = try await TLSByteStream.connect(
                host: endpoint.host, port: endpoint.port, pin: pin, caFile: options.caFile,
                timeout: options.connectTimeout, resolver: options.resolver)
            fingerprint = tls.peerCertificateSHA256
            peer = tls.peer
            stream = tls
        }
        return try await upgrade(
            stream: stream, endpoint: endpoint, options: options, peerCertificateSHA256: fingerprint,
            peerAddress: peer, deadline: deadline, logger: logger)
    }

    /// Runs the upgrade over an already connected stream (any `ByteStream`, e.g. an in-memory pair in tests).
    /// The stream is closed if the upgrade fails.
    package static func upgrade(
        stream: any ByteStream, endpoint: GatewayEndpoint, options: Options, peerCertificateSHA256: String? = nil,
        peerAddress: SocketAddress? = nil, deadline: ContinuousClock.Instant, logger: Logger
    ) async throws -> WebSocketClient {
        let handshake = WebSocketHandshake()
        let request = handshake.request(for: endpoint, extraHeaders: options.extraHeaders)
        do {
            let leftover = try await Self.withDeadline(deadline, endpoint: endpoint, stage: "WebSocket upgrade") {
                try await stream.write(request)
                var received: [UInt8] = []
                while true {
                    if let headLength = WebSocketHandshake.responseHeadLength(in: received) {
                        try handshake.validate(responseHead: Array(received[..<headLength]))
                        return Array(received[headLength...])
                    }
                    guard received.count <= WebSocketHandshake.maxResponseHeadSize else {
                        throw WebSocketError.upgradeResponseTooLarge(limit: WebSocketHandshake.maxResponseHeadSize)
                    }
                    let bytes = try await stream.read(maxBytes: 4_096)
                    guard !bytes.isEmpty else {
                        throw WebSocketError.malformedUpgradeResponse(reason: "the server closed the connection")
                    }
                    received.append(contentsOf: bytes)
                }
            }
            logger.debug("connected", metadata: endpoint.logMetadata)
            return WebSocketClient(
                stream: stream, leftover: leftover, endpoint: endpoint, options: options,
                peerCertificateSHA256: peerCertificateSHA256, peerAddress: peerAddress, logger: logger)
        } catch {
            await stream.close()
            throw error
        }
    }

    /// Sends a text message (one frame, masked).
    package func send(text: String) async throws {
        try await sendData(opcode: .text, payload: Array(text.utf8))
    }

    /// Sends a binary message (one frame, masked).
    package func send(binary: [UInt8]) async throws {
        try await sendData(opcode: .binary, payload: binary)
    }

    /// Sends a ping; its pong is noted in `lastPongReceivedAt` by `receive()`.
    package func ping() async throws {
        try checkOpen()
        try await stream.write(WebSocketFrameEncoder.encodeClientFrame(opcode: .ping, payload: Digest.randomBytes(8)))
    }

    /// The most received bytes ever held undecoded at once: shows that an oversized message is refused
    /// from its header instead of being buffered.
    package var peakBufferedByteCount: Int { decoder.peakBufferedByteCount }

    /// Changes the largest incoming message accepted, e.g. to `policy.maxPayload` after `hello-ok`.
    package func setMaxMessageSize(_ bytes: Int) {
        aggregator.maxMessageSize = max(0, bytes)
    }

    private func sendData(opcode: WebSocketOpcode, payload: [UInt8]) async throws {
        try checkOpen()
        logger.trace("send", metadata: ["ws.opcode": "\(opcode)", "ws.bytes": "\(payload.count)"])
        try await stream.write(WebSocketFrameEncoder.encodeClientFrame(opcode: opcode, payload: payload))
    }

    private func checkOpen() throws {
        if let terminalError { throw terminalError }
        guard stateMachine.isOpen else { throw WebSocketError.closed(code: .normalClosure, reason: "closing") }
    }
}

extension GatewayEndpoint {
    /// Scheme, host and port only: a path or query may carry a token, and tokens never go to the log.
    var logMetadata: Logger.Metadata {
        ["ws.scheme": "\(scheme.rawValue)", "ws.host": "\(host)", "ws.port": "\(port)"]
    }
}
