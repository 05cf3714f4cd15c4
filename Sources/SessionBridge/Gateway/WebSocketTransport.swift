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
    package var peerIsLoopback: Bool { client.peerAddress?.ip.map(GatewayEndpoint.isLoopback(address:)) ?? false }

    /// Opens sockets to `endpoint` with the stored pin, classifying failures for the reconnect logic:
    /// a refused plaintext host, an untrusted certificate or a pin mismatch will not fix itself. With
    /// `refusedUpgradeIsPermanent` (setup, where a person waits), an upgrade answered with a client error
    /// such as 404 is permanent too; the daemon keeps retrying it, since a proxy may be starting.
    package static func opener(
        endpoint: GatewayEndpoint, pin: String?, caFile: String? = nil, connectTimeout: Duration = .seconds(10),
        resolver: HostResolver = .system, refusedUpgradeIsPermanent: Bool = false, logger: Logger
    ) -> @Sendable () async throws -> any GatewayTransport {
        { () async throws -> any GatewayTransport in
            var options = WebSocketClient.Options(tlsPinSHA256: pin, connectTimeout: connectTimeout, caFile: caFile)
            options.closeTimeout = .milliseconds(500)
            options.resolver = resolver
            do {
                return WebSocketTransport(client: try await WebSocketClient.connect(to: endpoint, options: options, logger: logger))
            } catch let e as TransportError {
                throw TransportFailure(e, isPermanent: isPermanent(e))
            } catch let e as WebSocketError where refusedUpgradeIsPermanent {
                throw TransportFailure(e, isPermanent: isPermanentRefusal(e))
            }
        }
    }

    /// An upgrade answered 4xx other than 408 (timeout) and 429 (too many requests): the URL or its path is
    /// wrong, and asking again will not change the answer.
    static func isPermanentRefusal(_ e: WebSocketError) -> Bool {
        guard case .upgradeRejected(let line) = e else { return false }
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { return false }
        return (400...499).contains(status) && status != 408 && status != 429
    }

    static func isPermanent(_ e: TransportError) -> Bool {
        switch e {
        case .plaintextNotAllowed, .plaintextPeerNotAllowed, .untrustedCertificate, .pinMismatch, .invalidPin, .invalidEndpoint,
             .caFileUnreadable, .invalidHeader:
            true
        default:
            false
        }
    }
}
