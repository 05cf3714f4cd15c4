import AudioIO
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

    /// The realtime config the Gateway gives at a later connect is what the next relay session asks for.
    @Test(.requires(.builtBinary))
    func `a talk.realtime changed on the Gateway is used by the relay session after a reconnect`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        @Sendable func config(_ voice: String) -> String {
            #"{"cmd": "talk-config", "config": {"talk": {"resolved": {"provider": "system", "config": {}}, "realtime": "#
                + #"{"provider": "refgw", "model": "refgw-realtime-2", "voice": "\#(voice)"}}, "session": {"mainKey": "main"}}}"#
        }
        @Sendable func created() async throws -> [JSONValue] { try await Self.relayLog(h).filter { $0["kind"] == "created" } }
        _ = try await offPool { try h.gateway.control(config("cedar")) }
        let quiet = h.command.home + "/quiet.wav"
        try WAVAudio(PCMBuffer(sampleRate: 16_000, samples: [Int16](repeating: 0, count: 60 * 16_000))).write(path: quiet)
        let running = try h.command.start(["run", "--mode", "realtime", "--input", quiet, "--output", h.command.home + "/out.wav"])
        #expect(try await h.eventually { try await created().count == 1 }, "no relay session: \(running.stderrSoFar)")
        #expect(try await created().first?["requested"]?["voice"] == "cedar")
        _ = try await offPool { try h.gateway.control(config("marin")) }
        // The first reconnect reads talk.config again (its session may race that read); the next one has it for sure.
        for count in [2, 3] {
            let r = try await h.run(["reconnect"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try await h.eventually { try await created().count >= count }, "no relay session after reconnect \(count - 1)")
        }
        let last = try await created().last
        #expect(last?["requested"] == ["provider": "refgw", "model": "refgw-realtime-2", "voice": "marin"], "\(String(describing: last))")
        let stop = try await h.run(["stop"])
        #expect(stop.status == 0, "\(stop.stderr)")
        let outcome = try await running.finish(timeout: .seconds(60))
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(try await offPool { try h.gateway.control("violations") }["count"] == 0)
    }
}
