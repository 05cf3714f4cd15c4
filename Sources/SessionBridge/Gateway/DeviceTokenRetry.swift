/// The one bounded retry with the stored device token after the Gateway refused the configured shared
/// token with `AUTH_TOKEN_MISMATCH` (gateway-protocol.md §2.5). The device token goes only to endpoints
/// where it cannot leak to someone else: loopback, or `wss://` with a pinned certificate.
package struct DeviceTokenRetry: Sendable, Equatable, CustomStringConvertible {
    /// Whether the endpoint may be sent the device token after a refusal (see `isTrusted`).
    package var trustedEndpoint: Bool
    /// The shared token from configuration (`auth.token`), if any.
    package var sharedToken: String?
    /// The stored device token for this connection's role, if any.
    package var deviceToken: String?

    package init(trustedEndpoint: Bool, sharedToken: String?, deviceToken: String?) {
        self.trustedEndpoint = trustedEndpoint
        self.sharedToken = sharedToken
        self.deviceToken = deviceToken
    }

    /// `wss://` whose certificate is pinned, known before connecting. Loopback also qualifies, but that is
    /// decided per connection from the socket's peer address (`GatewayTransport.peerIsLoopback`), not from
    /// the name. Plaintext to a private-network host is not enough: anyone on that network could answer
    /// and collect the device token.
    package static func isTrusted(_ endpoint: GatewayEndpoint, pinnedFingerprint: String?) -> Bool {
        guard endpoint.scheme == .wss, let pin = pinnedFingerprint else { return false }
        return !pin.isEmpty
    }

    /// The `auth` for the retry after `error`, or nil when no retry is allowed: the refusal must be
    /// `AUTH_TOKEN_MISMATCH` not marked `canRetryWithDeviceToken: false`, the refused attempt must have
    /// sent the shared token, the endpoint must be trusted and a different device token must be stored.
    /// The retry carries the device token in place of the shared one; a password stays as it was sent.
    package func auth(after error: ConnectError, sent: ConnectAuth) -> ConnectAuth? {
        guard trustedEndpoint, error.code == "AUTH_TOKEN_MISMATCH" else { return nil }
        guard case .rejected(let shape) = error, shape.details?["canRetryWithDeviceToken"]?.boolValue != false else { return nil }
        guard let shared = sharedToken, sent.token == shared, let device = deviceToken, !device.isEmpty, device != shared else {
            return nil
        }
        return ConnectAuth(token: device, password: sent.password)
    }

    /// Says what is known without the tokens themselves.
    package var description: String {
        "DeviceTokenRetry(trustedEndpoint: \(trustedEndpoint), sharedToken: \(sharedToken == nil ? "none" : "set"), "
            + "deviceToken: \(deviceToken == nil ? "none" : "set"))"
    }
}
