import Foundation
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `run --mode realtime` creates its relay session with `talk.config`'s `talk.realtime` provider, model and voice, as
/// the iOS app does (TalkModeGatewayConfig.swift). In RealtimeDaemonTests: `make test`'s second pass.
extension RealtimeDaemonTests {
    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `the realtime relay session is created with talk.realtime's provider, model and voice`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let config = #"{"cmd": "talk-config", "config": {"talk": {"resolved": {"provider": "system", "config": {}}, "#
            + #""realtime": {"provider": "refgw", "providers": {"refgw": {"model": "refgw-realtime-2", "voice": "cedar"}}}}, "#
            + #""session": {"mainKey": "main"}}}"#
        _ = try await offPool { try h.gateway.control(config) }
        _ = try await offPool { try h.gateway.control(#"{"cmd": "talk-relay", "texts": ["go forward ten meters"]}"#) }
        let clip = try RunCommandTests.clip.path()
        let r = try await h.command.run(["run", "--mode", "realtime", "--input", clip, "--output", h.command.home + "/out.wav", "--max-turns", "1"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let created = try await Self.relayLog(h).filter { $0["kind"] == "created" }
        #expect(!created.isEmpty && created.allSatisfy {
            $0["requested"] == ["provider": "refgw", "model": "refgw-realtime-2", "voice": "cedar"]
        }, "\(created)")
        #expect(try await offPool { try h.gateway.control("violations") }["count"] == 0)
    }
}
