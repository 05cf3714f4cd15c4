import Foundation
import TalkTestSupport
import Testing

@testable import SessionBridge

/// A device paired before this version asked for `operator.approvals` (its operator token carries read and write
/// only): its next connect asks for the approvals scope too, which a remote Gateway answers with a `scope-upgrade`
/// pairing request (refgw `--remote`, as upstream's connect-device-pairing.ts). The socket waits for the owner's
/// approval as setup's sockets do, with the request's id, and once approved it reviews the agent's commands.
@Suite struct ScopeUpgradeTests {
    typealias Harness = GatewayIntegrationTests.Harness
    static let oldScopes = ["operator.read", "operator.write"]

    @Test func `a stored operator token without the approvals scope waits for its scope upgrade, then hears approvals`() async throws {
        let h = try await Harness.start(["--remote", "--token", "the-shared-token"])
        let identity = try DeviceIdentity.loadOrCreate(paths: h.paths)
        let credentials = try CredentialStore(paths: h.paths)
        try await credentials.useOperatorSecret(.init(token: "the-shared-token", password: nil))
        let open = WebSocketTransport.opener(endpoint: try GatewayEndpoint(parsing: h.gateway.startup.url), pin: nil, logger: h.logger)

        // An older openclaw-talk pairs the operator role asking for read and write only, and stores its token.
        var old = GatewayConnection.Dependencies(openTransport: open) {
            .init(profile: .operator(scopes: Self.oldScopes, displayName: "test box", version: "0.0.9"),
                  auth: await credentials.auth(for: .operator))
        }
        old.helloReceived = { hello, _ in try? await credentials.record(hello) }
        let oldConnection = GatewayConnection(identity: identity, dependencies: old, timing: GatewayIntegrationTests.fastTiming, logger: h.logger)
        let oldRun = Task { await oldConnection.run() }
        #expect(try await h.gateway.approveRequests(count: 1).count == 1, "the first pairing was approved")
        #expect(await GatewayIntegrationTests.waitFor(oldConnection, GatewayIntegrationTests.connected) != nil)
        oldRun.cancel()
        await oldRun.value
        #expect(await credentials.snapshot.deviceTokens["operator"]?.scopes == Self.oldScopes)

        // This version, on the same stored token.
        let session = GatewaySession(identity: identity, credentials: credentials, displayName: "test box", version: "0.1.0-test",
                                     openTransport: open, timing: GatewayIntegrationTests.fastTiming, logger: h.logger)
        let op = session.operatorConnection
        let running = Task { await op.run() }
        defer { running.cancel() }
        let waiting = await GatewayIntegrationTests.waitFor(op) { if case .waitingForApproval = $0 { true } else { false } }
        guard case .waitingForApproval(let requestId?, _)? = waiting else {
            Issue.record("the operator socket did not wait for a pairing approval: \(String(describing: waiting))")
            return
        }
        let pending = try await h.gateway.control("pending")["pending"]?.arrayValue ?? []
        let request = try #require(pending.first { $0["requestId"]?.stringValue == requestId }, "pending: \(pending)")
        #expect(request["reason"] == "scope-upgrade", "\(request)")
        #expect(request["role"] == "operator")
        #expect(request["scopes"]?.arrayValue?.contains("operator.approvals") == true, "\(request)")
        #expect(PairingStatus.pending(.operator, requestId: requestId).contains("approve \(requestId)"))

        #expect(try await h.gateway.control(#"{"cmd":"approve","requestId":"\#(requestId)"}"#)["approved"]?.stringArray == [requestId])
        #expect(await GatewayIntegrationTests.waitFor(op, GatewayIntegrationTests.connected) != nil, "connected after the upgrade")
        let approvals = ApprovalClient(connection: op, logger: h.logger)
        let changes = await approvals.changes()
        let following = Task { await approvals.run() }
        defer { following.cancel() }
        let asked = try await h.gateway.control(#"{"cmd":"approval-request","command":"rm -rf build"}"#)
        let id = try #require(asked["approval"]?["id"]?.stringValue)
        guard case .requested(let heard)? = await ApprovalClientTests.next(changes) else {
            Issue.record("the upgraded socket did not hear the agent's approval request")
            return
        }
        #expect(heard.id == id)
        try h.gateway.expectNoViolations()
        try h.expectNoSecretsLogged(["the-shared-token"])
    }
}
