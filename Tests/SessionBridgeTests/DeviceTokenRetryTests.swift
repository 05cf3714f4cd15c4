import Testing

@testable import SessionBridge

/// The pure rule for the one retry with the stored device token after `AUTH_TOKEN_MISMATCH`.
@Suite struct DeviceTokenRetryTests {
    static let pin = String(repeating: "ab", count: 32)

    @Test(arguments: [
        ("ws://127.0.0.1:18789", nil, false),
        ("ws://localhost:18789", nil, false),
        ("ws://[::1]:18789", nil, false),
        ("ws://127.8.9.10", nil, false),
        ("ws://192.168.1.20:18789", nil, false),
        ("ws://10.0.0.5:18789", nil, false),
        ("ws://gateway.local:18789", nil, false),
        ("ws://192.168.1.20:18789", pin, false),
        ("wss://gateway.example.com", nil, false),
        ("wss://gateway.example.com", "", false),
        ("wss://gateway.example.com", pin, true),
        ("wss://192.168.1.20:8443", pin, true),
        ("wss://127.0.0.1:8443", nil, false),
    ] as [(String, String?, Bool)])
    func `before connecting only a pinned wss endpoint is trusted with the device token (loopback is the peer's call)`(url: String, pin: String?, trusted: Bool) throws {
        let endpoint = try GatewayEndpoint(parsing: url)
        #expect(DeviceTokenRetry.isTrusted(endpoint, pinnedFingerprint: pin) == trusted)
    }

    static func mismatch(_ details: JSONValue?) -> ConnectError {
        .rejected(GatewayErrorShape(code: "INVALID_REQUEST", message: "unauthorized: gateway token mismatch", details: details))
    }

    static let allowed: JSONValue = ["code": "AUTH_TOKEN_MISMATCH", "canRetryWithDeviceToken": true,
                                     "recommendedNextStep": "retry_with_device_token"]

    @Test func `a refused shared token is retried with the device token alone, keeping the password`() {
        let retry = DeviceTokenRetry(trustedEndpoint: true, sharedToken: "shared", deviceToken: "device")
        let sent = ConnectAuth(token: "shared", password: "pw")
        #expect(retry.auth(after: Self.mismatch(Self.allowed), sent: sent) == ConnectAuth(token: "device", password: "pw"))
        // Details that do not mention the retry do not forbid it.
        #expect(retry.auth(after: Self.mismatch(["code": "AUTH_TOKEN_MISMATCH"]), sent: sent)?.token == "device")
    }

    @Test func `no retry when the Gateway forbids it, the endpoint is untrusted, or there is nothing to retry with`() {
        let trusted = DeviceTokenRetry(trustedEndpoint: true, sharedToken: "shared", deviceToken: "device")
        let sent = ConnectAuth(token: "shared")
        let forbidden: JSONValue = ["code": "AUTH_TOKEN_MISMATCH", "canRetryWithDeviceToken": false,
                                    "recommendedNextStep": "update_auth_credentials"]
        #expect(trusted.auth(after: Self.mismatch(forbidden), sent: sent) == nil)
        #expect(trusted.auth(after: Self.mismatch(["code": "AUTH_DEVICE_TOKEN_MISMATCH"]), sent: sent) == nil)
        #expect(trusted.auth(after: .connectionLost("closed"), sent: sent) == nil)
        // The refused attempt already carried the device token, not the shared one.
        #expect(trusted.auth(after: Self.mismatch(Self.allowed), sent: ConnectAuth(token: "device")) == nil)
        let untrusted = DeviceTokenRetry(trustedEndpoint: false, sharedToken: "shared", deviceToken: "device")
        #expect(untrusted.auth(after: Self.mismatch(Self.allowed), sent: sent) == nil)
        let noDeviceToken = DeviceTokenRetry(trustedEndpoint: true, sharedToken: "shared", deviceToken: nil)
        #expect(noDeviceToken.auth(after: Self.mismatch(Self.allowed), sent: sent) == nil)
    }

    @Test func `its description never shows a token`() {
        let text = "\(DeviceTokenRetry(trustedEndpoint: true, sharedToken: "shared-secret", deviceToken: "device-secret"))"
        #expect(!text.contains("shared-secret"))
        #expect(!text.contains("device-secret"))
    }
}
