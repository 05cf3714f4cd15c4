import Foundation
import TalkLogging
import Testing

@testable import SessionBridge

/// The device-token retry after `AUTH_TOKEN_MISMATCH`, against the reference Gateway on loopback.
@Suite(.serialized) struct DeviceTokenRetryIntegrationTests {
    typealias Harness = GatewayIntegrationTests.Harness
    static let wrongSharedToken = "not-the-gateway-token"

    /// Pairs through a setup code (storing node and operator device tokens), then configures a shared
    /// token the Gateway does not know, as `setup --token` with a stale token would.
    static func pairedWithWrongSharedToken(dropDeviceTokens: Bool) async throws -> Harness {
        let h = try await Harness.start(["--token", "the-gateway-token", "--print-setup-code", "--auto-approve",
                                         "--tick-interval-ms", "500"])
        _ = try await h.setup(code: try SetupCode.parse(h.gateway.startup.setupCode ?? ""))
        let url = try #require(try GatewayConfig.load(paths: h.paths)?.url)
        // A bootstrap token marks a fresh setup code, which drops stored device tokens; it lives in
        // memory only, so the session below does not see it.
        try await CredentialStore(paths: h.paths).beginSetup(
            gatewayURL: url, bootstrapToken: dropDeviceTokens ? "fresh-code" : nil, sharedToken: wrongSharedToken, password: nil)
        #expect(try await CredentialStore(paths: h.paths).snapshot.deviceTokens.isEmpty == dropDeviceTokens)
        return h
    }

    /// The `connect` frames refgw received, as (role, length of auth.token) in arrival order.
    static func connects(_ h: Harness) async throws -> [(role: String, tokenLength: Int?)] {
        let frames = try await h.gateway.control("frames")["frames"]?.arrayValue ?? []
        return frames.compactMap { entry in
            guard let frame = entry["frame"], frame["method"]?.stringValue == "connect" else { return nil }
            let marker = frame["params"]?["auth"]?["token"]?.stringValue  // "<redacted len=N>"
            let length = marker.flatMap { Int($0.drop { !$0.isNumber }.prefix { $0.isNumber }) }
            return (frame["params"]?["role"]?.stringValue ?? "?", length)
        }
    }

    static func paused(_ s: ConnectionState) -> Bool { if case .disconnected = s { true } else { false } }

    @Test func `a refused shared token on loopback is retried once with the stored device token and connects`() async throws {
        let h = try await Self.pairedWithWrongSharedToken(dropDeviceTokens: false)
        let before = try await Self.connects(h).count
        let session = try GatewaySession.fromStoredSetup(paths: h.paths, version: "0.1.0-test",
                                                         timing: GatewayIntegrationTests.fastTiming, logger: h.logger)
        let run = Task { await session.run() }
        defer { run.cancel() }
        #expect(await GatewayIntegrationTests.waitFor(session.node, GatewayIntegrationTests.connected).map(GatewayIntegrationTests.connected) == true)
        #expect(await GatewayIntegrationTests.waitFor(session.operatorConnection, GatewayIntegrationTests.connected).map(GatewayIntegrationTests.connected) == true)
        #expect(try await session.operatorConnection.request(method: "system-presence") != nil)
        let node = try await Self.connects(h).dropFirst(before).filter { $0.role == "node" }
        // First the shared token, then the stored node device token in its place, and nothing more.
        let deviceToken = try #require(await CredentialStore(paths: h.paths).snapshot.deviceTokens["node"]?.deviceToken)
        #expect(deviceToken.count != Self.wrongSharedToken.count)
        #expect(node.map(\.tokenLength) == [Self.wrongSharedToken.count, deviceToken.count])
        try h.expectNoSecretsLogged([Self.wrongSharedToken])
        try h.gateway.expectNoViolations()
    }

    @Test func `without a stored device token the refused shared token pauses after exactly one attempt`() async throws {
        let h = try await Self.pairedWithWrongSharedToken(dropDeviceTokens: true)
        let before = try await Self.connects(h).count
        let session = try GatewaySession.fromStoredSetup(paths: h.paths, version: "0.1.0-test",
                                                         timing: GatewayIntegrationTests.fastTiming, logger: h.logger)
        let run = Task { await session.run() }
        defer { run.cancel() }
        let end = await GatewayIntegrationTests.waitFor(session.node, Self.paused)
        guard case .disconnected(let reason)? = end else {
            Issue.record("the node socket did not pause: \(String(describing: end))")
            return
        }
        #expect(reason.contains("The Gateway rejected the token"))
        #expect(reason.contains("paused"))
        // The Gateway would have allowed the retry; there was simply no device token to retry with.
        guard case .rejected(let shape)? = await session.node.lastConnectError else {
            Issue.record("no refusal recorded")
            return
        }
        #expect(shape.detailCode == "AUTH_TOKEN_MISMATCH")
        #expect(shape.details?["canRetryWithDeviceToken"]?.boolValue == true)
        let node = try await Self.connects(h).dropFirst(before).filter { $0.role == "node" }
        #expect(node.map(\.tokenLength) == [Self.wrongSharedToken.count])
        try h.expectNoSecretsLogged([Self.wrongSharedToken])
        try h.gateway.expectNoViolations()
    }
}
