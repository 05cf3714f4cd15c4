import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// The Gateway's `system.notify` (an operator's `node.invoke`) while Talk is on: shown on the desktop (a test
/// notification server on a private bus) and spoken at the loop's next pause, heard on a private PulseAudio's
/// speaker; a passive one, or any with `--no-speak-notifications`, only shown.
@Suite struct SpokenNotificationTests {
    /// `run` listening on a private PulseAudio whose microphone does not hear its speaker (nothing of the notice
    /// comes back as the user), with `server` as its desktop.
    static func listening(_ pulse: PrivatePulse, _ gw: ReferenceGatewayProcess, _ command: BuiltCommand, _ server: NotificationServer,
                          _ extra: [String] = []) async throws -> BuiltCommand.Running {
        let running = try command.start([
            "run", "--gateway", gw.startup.url, "--token", RunCommandTests.token, "--source", "vmic", "--sink", "vsink",
            "--json", "--seconds", "120",
        ] + extra, environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress])
        try #require(await RunLoopbackTests.waitFor(running, #""to":"listening""#), "never listened: \(running.stderrSoFar)")
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if try await gw.authenticatedNode() != nil { return running }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CommandFailure("the node never connected: \(running.stderrSoFar)")
    }

    /// The Gateway's operator invokes `system.notify` on this node; its result.
    static func notify(_ gw: ReferenceGatewayProcess, _ params: String) async throws -> JSONValue {
        let line = #"{"cmd":"node-invoke","command":"system.notify","params":\#(params),"timeoutMs":15000}"#
        return try #require(try await offPool { try gw.control(line) }["result"])
    }

    static func sentences(_ stdout: String) -> [String] {
        RunCommandTests.events(stdout).filter { $0["event"] == "speakingStarted" }.compactMap { $0["sentence"]?.stringValue }
    }

    @Test(.requires(.builtBinary, PrivatePulse.utilities))
    func `a notification is spoken at the next pause while Talk is on, and a passive one only shown`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        try await PrivatePulse.with(microphone: .ownSink) { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            let running = try await Self.listening(pulse, gw, command, server)
            let recording = try pulse.record()
            let passive = try await Self.notify(gw, #"{"title":"Backup","body":"The nightly backup finished","priority":"passive"}"#)
            #expect(passive["ok"] == true, "\(passive)")
            let active = try await Self.notify(gw, #"{"title":"Build","body":"The build finished"}"#)
            #expect(active["ok"] == true, "\(active)")
            // Notices are spoken in the order they came: had the passive one been, it would be first.
            let spoken = await RunLoopbackTests.waitFor(running, #"The build finished","#, upTo: .seconds(30))
            let done = await RunLoopbackTests.waitFor(running, #""completed":true"#, upTo: .seconds(30))
            let heard = try await recording.finish()
            running.process.terminate()
            let r = try await running.finish(timeout: .seconds(30))
            #expect(spoken && done, "the notice was not spoken: \(Self.sentences(r.stdout))\n\(r.stderr)")
            #expect(Self.sentences(r.stdout) == ["Build. The build finished"], "\(r.stdout)")
            #expect(DeskCommandTests.voicedMilliseconds(heard) >= 300, "the notice was not heard on the speaker")
            let shown = server.notifications.map { [$0.summary, "\($0.urgency ?? -1)"] }
            #expect(shown == [["Backup", "0"], ["Build", "1"]], "both shown on the desktop: \(shown)")
        }
    }

    @Test(.requires(.builtBinary, PrivatePulse.utilities))
    func `with --no-speak-notifications a notification is shown and not spoken`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        try await PrivatePulse.with(microphone: .ownSink) { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            let running = try await Self.listening(pulse, gw, command, server, ["--no-speak-notifications"])
            let active = try await Self.notify(gw, #"{"title":"Build","body":"The build finished"}"#)
            #expect(active["ok"] == true, "\(active)")
            #expect(server.notifications.last?.summary == "Build")
            // A typed turn: a notice waiting to be spoken would be said by the pause after its reply at the latest.
            let typed = try await command.run(["say", "what is the weather"])
            #expect(typed.status == 0, "say: \(typed.stderr)")
            let replied = await RunLoopbackTests.waitFor(running, #""event":"turnEnded""#, upTo: .seconds(60))
            let resting = await RunLoopbackTests.waitFor(running, #""to":"listening""#, count: 2, upTo: .seconds(30))
            running.process.terminate()
            let r = try await running.finish(timeout: .seconds(30))
            #expect(replied && resting, "the typed turn did not end: \(r.stdout)\n\(r.stderr)")
            let sentences = Self.sentences(r.stdout)
            #expect(!sentences.isEmpty, "the reply was spoken")
            #expect(!sentences.contains { $0.contains("build finished") }, "the notice was spoken: \(sentences)")
        }
    }
}
