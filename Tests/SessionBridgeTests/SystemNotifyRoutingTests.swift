import Foundation
import Synchronization
import Testing

@testable import SessionBridge

/// `system.notify` on the node socket: the Gateway forwards it to a Linux node that declared it, the node's handler
/// gets the params, and its answers come back in upstream's Linux node's shapes.
@Suite(.serialized) struct SystemNotifyRoutingTests {
    @Test func `an operator's system.notify reaches the handler and its answers come back as upstream's`() async throws {
        let h = try await TalkGatewayHarness.start()
        let node = try await h.connect(TalkGatewayHarness.nodeProfile())
        let op = try await h.connect(TalkGatewayHarness.operatorProfile)
        defer { node.stop(); op.stop() }
        let seen = Mutex<[SystemNotifyRequest]>([])
        let refuse = Mutex(false)
        let handler: NodeCommandHandler = { params in
            if refuse.withLock({ $0 }) { return .failure(.notificationsDisabled) }
            do {
                let request = try SystemNotifyRequest(params: params)
                seen.withLock { $0.append(request) }
                return .success(SystemNotifyRequest.okPayload)
            } catch let failure as NodeCommandFailure {
                return .failure(failure)
            } catch {
                return .failure(.notificationsUnavailable)
            }
        }
        let router = NodeCommandRouter(node: node.connection, nodeId: h.identity.deviceId,
                                       declared: TalkGatewayHarness.nodeProfile().commands,
                                       handler: { _, _ in PushToTalkResult(captureId: "x") },
                                       others: ["system.notify": handler], logger: h.logger)
        let routing = await router.start()
        defer { routing.cancel() }
        let shown = try await op.connection.request(method: "node.invoke", params: [
            "nodeId": .string(h.identity.deviceId), "command": "system.notify",
            "params": ["title": "Build", "body": "Done", "priority": "timeSensitive"],
            "idempotencyKey": .string(UUID().uuidString),
        ], timeout: .seconds(15))
        #expect(shown?["payload"] == ["ok": true])
        #expect(seen.withLock { $0 } == [SystemNotifyRequest(title: "Build", body: "Done", priority: .timeSensitive)])

        let empty = try await NodeTalkTests.invoke(h, "system.notify", params: #"{"title":"  ","body":""}"#)
        #expect(empty["ok"] == false && empty["error"]?["code"] == "INVALID_REQUEST")
        #expect(empty["error"]?["message"] == "INVALID_REQUEST: empty notification")
        refuse.withLock { $0 = true }
        let disabled = try await NodeTalkTests.invoke(h, "system.notify", params: #"{"title":"x"}"#)
        #expect(disabled["error"]?["code"] == "NOTIFICATIONS_DISABLED")
        try h.gateway.expectNoViolations()
    }
}
