import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `run --mode realtime` does not do push-to-talk (the relay hears everything and finds the turns itself), so its
/// node does not declare `talk.ptt.*`: a Gateway offers no push-to-talk for it instead of forwarding commands the
/// node can only refuse. In RealtimeDaemonTests: `make test`'s second pass.
extension RealtimeDaemonTests {
    @Test(.requires(.builtBinary))
    func `in realtime mode the node declares no talk.ptt command and the Gateway forwards none`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let pid = try await h.start(["--mode", "realtime"] + (try h.fileDevices))
        @Sendable func node() async throws -> JSONValue? { try await h.gateway.authenticatedNode() }
        #expect(try await h.eventually { try await node() != nil }, "the node never connected: \(h.log)")
        let shown = try #require(try await node())
        let declared = shown["commands"]?.arrayValue?.compactMap(\.stringValue)
        #expect(declared == ["system.notify"], "declared: \(shown)")
        #expect(shown["caps"]?.arrayValue?.contains("talk") == true, "still a Talk node: \(shown)")
        for command in ["talk.ptt.start", "talk.ptt.stop", "talk.ptt.cancel", "talk.ptt.once"] {
            let invoke = JSONValue.object(["cmd": "node-invoke", "command": .string(command), "timeoutMs": 5_000]).jsonText
            do {
                _ = try await offPool { try h.gateway.control(invoke) }
                Issue.record("the Gateway forwarded \(command) to the realtime node")
            } catch ReferenceGatewayProcess.ControlError.refused(_, let reason) {
                #expect(reason.contains("did not declare"), "\(command): \(reason)")
            }
        }
        #expect(try await h.run(["stop"]).status == 0)
        #expect(await h.eventually { !DaemonHarness.alive(pid) }, "the daemon exits")
    }
}
