import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// Answers that do not decide at once: "allow always" waits for a spoken "yes"; the question's own sound on the
/// microphone never answers it.
extension SpokenApprovalTests {
    /// Waits (bounded) until approval `id`'s step `step` has been printed `count` times.
    static func waitForStep(_ running: BuiltCommand.Running, id: String, _ step: String, count: Int, upTo timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, running.process.isRunning {
            if approvalEvents(running.stdoutSoFar, id: id).filter({ $0 == step }).count >= count { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return approvalEvents(running.stdoutSoFar, id: id).filter { $0 == step }.count >= count
    }

    /// Says `words` into the microphone once the answer window has opened for the `count`th time.
    static func say(_ words: String, window count: Int, id: String, pulse: PrivatePulse, running: BuiltCommand.Running,
                    home: String) async throws {
        let open = await waitForStep(running, id: id, "listening", count: count, upTo: .seconds(60))
        try #require(open, "answer window \(count) never opened: \(approvalEvents(running.stdoutSoFar, id: id))\n\(running.stderrSoFar)")
        try await pulse.play(try await RunModesCommandTests.word(words, in: home) + RunModesCommandTests.silence(1))
    }

    @Test(.requires(.builtBinary, PrivatePulse.utilities), .requires(voiceTools[0], voiceTools[1]))
    func `a spoken "allow always" is sent only once a spoken "yes" confirms it`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        try await PrivatePulse.with { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            let running = try await Self.listening(pulse, gw, command, environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress])
            let asked = try await offPool { try gw.control(#"{"cmd":"approval-request","command":"rm -rf build"}"#) }
            let id = try #require(asked["approval"]?["id"]?.stringValue)
            try await Self.say("allow always", window: 1, id: id, pulse: pulse, running: running, home: command.home)
            let confirming = await Self.waitForStep(running, id: id, "confirm allow-always", upTo: .seconds(30))
            let beforeYes = try await Self.resolutions(gw)
            try await Self.say("yes", window: 2, id: id, pulse: pulse, running: running, home: command.home)
            let decided = await Self.waitForStep(running, id: id, "allow-always", upTo: .seconds(30))
            let resolutions = try await Self.resolutions(gw)
            running.process.terminate()
            let r = try await running.finish(timeout: .seconds(30))
            #expect(confirming && decided, "steps: \(Self.approvalEvents(r.stdout, id: id))\n\(r.stderr)")
            #expect(beforeYes.isEmpty, "sent before the confirmation: \(beforeYes)")
            #expect(resolutions == [[id, "allow-always"]])
        }
    }

    /// The daemon's own voice goes into vsink, which vmic hears: the question ("... Allow once, always, or deny?")
    /// reaches the microphone as a loudspeaker's would, and must not answer itself.
    @Test(.requires(.builtBinary, PrivatePulse.utilities))
    func `the question's own sound on the microphone never answers it`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        try await PrivatePulse.with { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            let running = try await Self.listening(pulse, gw, command, environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress],
                                                   sink: "vsink")
            let request = try await offPool { try gw.control(#"{"cmd":"approval-request","command":"rm -rf build"}"#) }
            let asked = try #require(request["approval"]?["id"]?.stringValue)
            let left = await Self.waitForStep(running, id: asked, "left pending", upTo: .seconds(60))
            running.process.terminate()
            let r = try await running.finish(timeout: .seconds(30))
            #expect(left, "steps: \(Self.approvalEvents(r.stdout, id: asked))\n\(r.stderr)")
            #expect(try await Self.resolutions(gw).isEmpty, "the question answered itself")
        }
    }
}
