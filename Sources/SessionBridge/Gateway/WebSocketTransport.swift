import TalkLogging

/// `GatewayTransport` over the RFC 6455 `WebSocketClient`: text and binary messages alike become bytes.
package struct WebSocketTransport: GatewayTransport {
    package let client: WebSocketClient

    package init(client: WebSocketClient) { self.client = client }

    package func send(text: String) async throws { try await client.send(text: text) }

    package func receive() async throws -> [UInt8] {
        switch try await client.receive() {
        case .text(let s): Array(s.utf8)
        case .binary(let b): b
        }
    }

    package func ping() async throws { try await client.ping() }
    package func setMaxMessageSize(_ bytes: Int) async { await client.setMaxMessageSize(bytes) }
    package func close() async { await client.close() }

    /// Opens sockets to `endpoint` with the stored pin, classifying failures for the reconnect logic:
    /// a refused plaintext host, an untrusted certificate or a pin mismatch will not fix itself.
    package static func opener(
        endpoint: GatewayEndpoint, pin: String?, caFile: String? = nil, connectTimeout: Duration = .seconds(10), logger: Logger
    ) -> @Sendable () async throws -> any GatewayTransport {
        { () async throws -> any GatewayTransport in
            var options = WebSocketClient.Options(tlsPinSHA256: pin, connectTimeout: connectTimeout, caFile: caFile)
            options.closeTimeout = .milliseconds(500)
            do {
                return WebSocketTransport(client: try await WebSocketClient.connect(to: endpoint, options: options, logger: logger))
            } catch let e as TransportError {
                throw TransportFailure(e, isPermanent: isPermanent(e))
            }
        }
    }

    static func isPermanent(_ e: TransportError) -> Bool {
        switch e {
        case .plaintextNotAllowed, .untrustedCertificate, .pinMismatch, .invalidPin, .invalidEndpoint,
             .caFileUnreadable, .invalidHeader:
            true
        default:
            false
        }
    }
}
