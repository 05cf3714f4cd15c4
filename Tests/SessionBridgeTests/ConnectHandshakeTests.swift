import Foundation
import Synchronization
import TalkLogging
import Testing

@testable import SessionBridge

@Suite struct ConnectHandshakeTests {
    static let identity: DeviceIdentity = {
        // A fixed seed keeps the test independent of the machine's state folder.
        (try? DeviceIdentity(seed: Array(repeating: 7, count: 32), instanceId: "test-instance"))
            ?? { fatalError("OpenSSL cannot make an Ed25519 key") }()
    }()
    let logger = Logger(label: "test", handler: InMemoryLogHandler())
    let sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// With the default timeouts (seconds): the fake Gateway answers at once, so only a broken handshake
    /// waits for them, and a loaded machine never does.
    func handshake(_ auth: ConnectAuth = ConnectAuth(bootstrapToken: "boot")) -> ConnectHandshake {
        ConnectHandshake(profile: .node(displayName: "kitchen", version: "0.1.0"), auth: auth, identity: Self.identity)
    }

    @Test func `a signed v3 connect is answered with hello-ok and the limit is raised`() async throws {
        let transport = MemoryTransport { sent, t in
            #expect(FakeGateway.verify(sent) == "v3")
            t.deliver(FakeGateway.helloOk(id: sent["id"]?.stringValue ?? "", deviceToken: "dev-tok"))
        }
        transport.deliver(Array("garbage before the challenge".utf8))
        transport.deliver(FakeGateway.challenge(nonce: "n-42", ts: 1234))
        let hello = try await handshake().perform(on: transport, sleep: sleep, logger: logger)
        #expect(hello.serverVersion == "2026.5.1-ref")
        #expect(hello.mainSessionKey == "agent:a:main")
        #expect(hello.issuedTokens.map(\.role) == ["node", "operator"])
        #expect(await transport.maxMessageSize == 1_048_576)
        let params = try #require(await transport.sent.first?["params"])
        #expect(params["device"]?["signedAt"] == .int(1234))
        #expect(params["device"]?["nonce"] == "n-42")
        #expect(params["client"]?["id"] == "node-host")
        #expect(params["client"]?["mode"] == "node")
        #expect(params["caps"]?.stringArray?.contains("voiceWake") == true)
        #expect(params["minProtocol"] == 3 && params["maxProtocol"] == 4)
    }

    @Test func `the token signed is the one the Gateway resolves first`() {
        #expect(ConnectAuth(token: "t", bootstrapToken: "b", deviceToken: "d").signatureToken == "t")
        #expect(ConnectAuth(bootstrapToken: "b", deviceToken: "d").signatureToken == "d")
        #expect(ConnectAuth(bootstrapToken: "b", password: "p").signatureToken == "b")
        #expect(ConnectAuth(password: "p").signatureToken == "")
    }

    @Test func `a v2 proof verifies when asked for`() async throws {
        let transport = MemoryTransport { sent, t in
            #expect(FakeGateway.verify(sent) == "v2")
            t.deliver(FakeGateway.helloOk(id: sent["id"]?.stringValue ?? ""))
        }
        transport.deliver(FakeGateway.challenge())
        var h = handshake()
        h.payloadVersion = .v2
        _ = try await h.perform(on: transport, sleep: sleep, logger: logger)
    }

    @Test func `no challenge within the timeout fails clearly and closes the socket`() async {
        let transport = MemoryTransport()
        var h = handshake()
        h.challengeTimeout = .milliseconds(300)
        // The timeout's sleep ends at once: no real time passes, so the scheduler cannot change the outcome.
        let slept = Mutex<[Duration]>([])
        await #expect(throws: ConnectError.challengeTimeout(seconds: 0.3)) {
            _ = try await h.perform(on: transport, sleep: { d in slept.withLock { $0.append(d) } }, logger: logger)
        }
        #expect(slept.withLock { $0 } == [.milliseconds(300)])
        #expect(await transport.isClosed)
    }

    @Test func `a challenge without a timestamp is refused`() async {
        let transport = MemoryTransport()
        transport.deliver(["type": "event", "event": "connect.challenge", "payload": ["nonce": "n"]])
        await #expect(throws: ConnectError.invalidChallenge) {
            _ = try await handshake().perform(on: transport, sleep: sleep, logger: logger)
        }
    }

    @Test func `pairing required shows the request id and the approve command`() async {
        let transport = MemoryTransport { sent, t in
            t.deliver(FakeGateway.error(id: sent["id"]?.stringValue ?? "", code: "PAIRING_REQUIRED",
                                        details: ["code": "PAIRING_REQUIRED", "requestId": "req-77", "reason": "not-paired",
                                                  "recommendedNextStep": "wait_then_retry", "pauseReconnect": false]))
        }
        transport.deliver(FakeGateway.challenge())
        do {
            _ = try await handshake().perform(on: transport, sleep: sleep, logger: logger)
            Issue.record("expected a refusal")
        } catch {
            #expect(error.behaviour == .waitForApproval(requestId: "req-77", retryAfterMs: nil))
            #expect(error.description.contains("openclaw devices approve req-77"))
        }
    }

    @Test func `a hello-ok without policy is not accepted`() async {
        let transport = MemoryTransport { sent, t in
            t.deliver(["type": "res", "id": .string(sent["id"]?.stringValue ?? ""), "ok": true,
                       "payload": ["type": "hello-ok", "protocol": 3, "server": ["version": "x"], "auth": ["role": "node", "scopes": []]]])
        }
        transport.deliver(FakeGateway.challenge())
        await #expect(throws: ConnectError.invalidHello(.missingField("policy"))) {
            _ = try await handshake().perform(on: transport, sleep: sleep, logger: logger)
        }
    }
}

@Suite struct ConnectErrorTests {
    @Test(arguments: [
        ("PAIRING_REQUIRED", ConnectBehaviour.waitForApproval(requestId: nil, retryAfterMs: nil)),
        ("PAIRING_REJECTED", .stop), ("PAIRING_EXPIRED", .pauseReconnect),
        ("AUTH_REQUIRED", .pauseReconnect), ("AUTH_UNAUTHORIZED", .pauseReconnect),
        ("AUTH_TOKEN_MISSING", .pauseReconnect), ("AUTH_TOKEN_MISMATCH", .pauseReconnect),
        ("AUTH_TOKEN_NOT_CONFIGURED", .pauseReconnect), ("AUTH_PASSWORD_MISSING", .pauseReconnect),
        ("AUTH_PASSWORD_MISMATCH", .pauseReconnect), ("AUTH_PASSWORD_NOT_CONFIGURED", .pauseReconnect),
        ("AUTH_BOOTSTRAP_TOKEN_INVALID", .pauseReconnect), ("AUTH_DEVICE_TOKEN_MISMATCH", .pauseReconnect),
        ("AUTH_SCOPE_MISMATCH", .pauseReconnect), ("AUTH_RATE_LIMITED", .retry(afterMs: 5000)),
        ("PROTOCOL_MISMATCH", .stop), ("CLIENT_VERSION_MISMATCH", .stop), ("DEVICE_IDENTITY_REQUIRED", .stop),
        ("DEVICE_AUTH_NONCE_REQUIRED", .retry(afterMs: 5000)), ("DEVICE_AUTH_NONCE_MISMATCH", .retry(afterMs: 5000)),
        ("DEVICE_AUTH_SIGNATURE_EXPIRED", .retry(afterMs: 5000)), ("DEVICE_AUTH_SIGNATURE_INVALID", .pauseReconnect),
        ("DEVICE_AUTH_DEVICE_ID_MISMATCH", .stop), ("DEVICE_AUTH_PUBLIC_KEY_INVALID", .stop),
        ("DEVICE_AUTH_INVALID", .pauseReconnect), ("UNAVAILABLE", .retry(afterMs: 5000)),
    ])
    func `each connect error code maps to a behaviour and a plain message`(_ code: String, _ behaviour: ConnectBehaviour) {
        let shape = GatewayErrorShape(code: "INVALID_REQUEST", message: "m", details: ["code": .string(code)], retryAfterMs: 5000)
        let error = ConnectError.rejected(shape)
        if case .waitForApproval = behaviour {
            #expect(error.behaviour == .waitForApproval(requestId: nil, retryAfterMs: 5000))
        } else {
            #expect(error.behaviour == behaviour)
        }
        #expect(!error.description.contains("INVALID_REQUEST: m"), "\(code) has no message of its own")
    }

    @Test func `an unknown retryable error is retried and an unknown fatal one pauses`() {
        let retry = ConnectError.rejected(GatewayErrorShape(code: "X", message: "m", retryable: true))
        #expect(retry.behaviour == .retry(afterMs: nil))
        let fatal = ConnectError.rejected(GatewayErrorShape(code: "X", message: "m"))
        #expect(fatal.behaviour == .pauseReconnect)
        #expect(fatal.description.contains("X: m"))
    }
}

@Suite struct BackoffTests {
    @Test func `the schedule doubles from half a second to thirty seconds`() {
        let delays = (1...9).map { Backoff.nominal(attempt: $0, initial: 0.5, maximum: 30) }
        #expect(delays == [0.5, 1, 2, 4, 8, 16, 30, 30, 30])
    }

    @Test func `jitter only shortens the delay and the Gateway's request is honoured`() {
        let b = Backoff()
        #expect(b.delay(attempt: 3, unit: 0) == 2)
        #expect(b.delay(attempt: 3, unit: 0.999) >= 1.6)
        #expect(b.delay(attempt: 1, unit: 0.5, notBefore: 4) == 4)
        #expect(b.delay(attempt: 1000, unit: 0.5) <= 30)
    }
}
