import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// Answers said aloud: the clip is played into vsink (so vmic hears it) once the run reports the answer window open
/// (`approvalPrompt` step "listening"), as a person answers after the question.
extension SpokenApprovalTests {
    static let voiceTools = [TestInput.program("espeak-ng", package: "espeak-ng"), TestInput.program("sox", package: "sox")]

    /// Asks `command`, waits for the answer window of that approval, and says `answer` into the microphone.
    static func ask(_ command: String, answer: String, pulse: PrivatePulse, gw: ReferenceGatewayProcess,
                    running: BuiltCommand.Running, home: String) async throws -> String {
        let asked = try await offPool { try gw.control(#"{"cmd":"approval-request","command":"\#(command)"}"#) }
        let id = try #require(asked["approval"]?["id"]?.stringValue)
        let listening = await waitForStep(running, id: id, "listening", upTo: .seconds(60))
        try #require(listening, "the answer window never opened: \(approvalEvents(running.stdoutSoFar, id: id))\n\(running.stderrSoFar)")
        try await pulse.play(try await RunModesCommandTests.word(answer, in: home) + RunModesCommandTests.silence(1))
        return id
    }

    @Test(.requires(.builtBinary, PrivatePulse.utilities), .requires(voiceTools[0], voiceTools[1]))
    func `a spoken "allow once" resolves exactly the approval read out, with allow-once`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        try await PrivatePulse.with { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            let running = try await Self.listening(pulse, gw, command, environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress])
            let first = try await offPool { try gw.control(#"{"cmd":"approval-request","command":"rm -rf build"}"#) }
            let id = try #require(first["approval"]?["id"]?.stringValue)
            // A second approval arrives while the first is read out: the answer is for the first only.
            let reading = await RunLoopbackTests.waitFor(running, #""event":"speakingStarted""#, upTo: .seconds(45))
            let second = try await offPool { try gw.control(#"{"cmd":"approval-request","command":"make install"}"#) }
            let other = try #require(second["approval"]?["id"]?.stringValue)
            let listening = await Self.waitForStep(running, id: id, "listening", upTo: .seconds(60))
            try #require(reading && listening, "\(Self.approvalEvents(running.stdoutSoFar, id: id))\n\(running.stderrSoFar)")
            try await pulse.play(try await RunModesCommandTests.word("allow once", in: command.home) + RunModesCommandTests.silence(1))
            let decided = await Self.waitForStep(running, id: id, "allow-once", upTo: .seconds(30))
            let resolutions = try await Self.resolutions(gw)
            running.process.terminate()
            let r = try await running.finish(timeout: .seconds(30))
            #expect(decided, "steps: \(Self.approvalEvents(r.stdout, id: id))\n\(r.stderr)")
            #expect(resolutions == [[id, "allow-once"]], "the other approval is \(other)")
        }
    }

    @Test(.requires(.builtBinary, PrivatePulse.utilities), .requires(voiceTools[0], voiceTools[1]))
    func `a spoken "deny" denies the approval read out`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        try await PrivatePulse.with { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            let running = try await Self.listening(pulse, gw, command, environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress])
            let id = try await Self.ask("rm -rf build", answer: "deny", pulse: pulse, gw: gw, running: running, home: command.home)
            let decided = await Self.waitForStep(running, id: id, "deny", upTo: .seconds(30))
            let resolutions = try await Self.resolutions(gw)
            running.process.terminate()
            let r = try await running.finish(timeout: .seconds(30))
            #expect(decided, "steps: \(Self.approvalEvents(r.stdout, id: id))\n\(r.stderr)")
            #expect(resolutions == [[id, "deny"]])
            #expect(server.notifications.isEmpty, "a notification was left for an approval decided by voice")
        }
    }
}
