import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// The daemon asks about the agent's command aloud while Talk is on: `run` on a private PulseAudio whose microphone
/// (vmic) hears what is played into vsink, its own voice going to a sink of its own (`replysink`), the reference
/// Gateway's agent asking. Unanswered, the approval stays pending with a notification; decided elsewhere while it is
/// read out, it is withdrawn aloud and no notification is left.
@Suite struct SpokenApprovalTests {
    /// One daemon asked about approvals: `run` on a private PulseAudio, its operator socket an approval client of a
    /// reference Gateway, its desktop a test notification server on a private bus.
    struct Listening {
        let pulse: PrivatePulse
        let gw: ReferenceGatewayProcess
        let command: BuiltCommand
        let running: BuiltCommand.Running
        let server: NotificationServer

        /// The agent asks to run `shellCommand` (`fields`: more of refgw's approval-request, each after a comma): the
        /// new approval's id.
        func request(_ shellCommand: String, _ fields: String = "") async throws -> String {
            let gw = gw
            let asked = try await offPool { try gw.control(#"{"cmd":"approval-request","command":"\#(shellCommand)"\#(fields)}"#) }
            return try #require(asked["approval"]?["id"]?.stringValue)
        }

        /// Stops the run and returns what it printed.
        func finish() async throws -> BuiltCommand.Outcome {
            running.process.terminate()
            return try await running.finish(timeout: .seconds(30))
        }

        /// What the Gateway records of approval `id` ("pending", "resolved").
        func status(of id: String) async throws -> JSONValue? {
            let gw = gw
            let records = try await offPool { try gw.control("approvals") }["approvals"]?.arrayValue ?? []
            return records.first { $0["id"]?.stringValue == id }?["status"]
        }
    }

    /// Runs `body` with `run` resting in `rests` ("waiting" in push-to-talk mode), `arguments` added to its own, once
    /// its operator socket is an approval client. `sink`: where its voice goes (vsink: vmic hears it, as a microphone
    /// hears a loudspeaker).
    static func withListeningDaemon(sink: String = "replysink", arguments: [String] = [], rests: String = "listening",
                                    _ body: (Listening) async throws -> Void) async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        try await PrivatePulse.with { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            try await pulse.pactl(["load-module", "module-null-sink", "sink_name=replysink", "rate=16000", "channels=1"])
            let running = try command.start([
                "run", "--gateway", gw.startup.url, "--token", RunCommandTests.token, "--source", "vmic", "--sink", sink,
                "--json", "--seconds", "150",
            ] + arguments, environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress])
            defer { if running.process.isRunning { running.process.terminate() } }
            try #require(await RunLoopbackTests.waitFor(running, #""to":"\#(rests)""#), "never \(rests): \(running.stderrSoFar)")
            try await waitForApprovalClient(gw, running)
            try await body(Listening(pulse: pulse, gw: gw, command: command, running: running, server: server))
        }
    }

    /// Waits (bounded) until the Gateway counts the run's operator socket as an approval client.
    static func waitForApprovalClient(_ gw: ReferenceGatewayProcess, _ running: BuiltCommand.Running) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let clients = try await offPool { try gw.control("clients") }["clients"]?.arrayValue ?? []
            if clients.contains(where: {
                $0["role"] == "operator" && $0["authenticated"] == true && $0["scopes"]?.arrayValue?.contains("operator.approvals") == true
            }) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CommandFailure("the operator socket never connected: \(running.stderrSoFar)")
    }

    /// Waits (bounded) until the run has printed approval `id`'s prompt event `step`.
    static func waitForStep(_ running: BuiltCommand.Running, id: String, _ step: String, upTo timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, running.process.isRunning {
            if approvalEvents(running.stdoutSoFar, id: id).contains(step) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return approvalEvents(running.stdoutSoFar, id: id).contains(step)
    }

    static func approvalEvents(_ stdout: String, id: String) -> [String] {
        RunCommandTests.events(stdout).filter { $0["event"] == "approvalPrompt" && $0["id"]?.stringValue == id }
            .compactMap { $0["step"]?.stringValue }
    }

    static func resolutions(_ gw: ReferenceGatewayProcess) async throws -> [[String?]] {
        let list = try await offPool { try gw.control("approvals") }["resolutions"]?.arrayValue ?? []
        return list.map { [$0["id"]?.stringValue, $0["decision"]?.stringValue] }
    }

    @Test(.requires(.builtBinary, PrivatePulse.utilities))
    func `no answer leaves the approval pending for other clients, with a notification whose buttons decide it`() async throws {
        try await Self.withListeningDaemon { d in
            let id = try await d.request("rm -rf build")
            // While the question is read out (seconds of speech), no notification: the voice asks first.
            let read = await RunLoopbackTests.waitFor(d.running, #""event":"speakingStopped""#, upTo: .seconds(45))
            #expect(read && d.server.notifications.isEmpty, "a notification was shown while the question was asked")
            let left = await Self.waitForStep(d.running, id: id, "left pending", upTo: .seconds(30))
            let shown = await d.server.wait { calls in calls.contains { $0.call == "Notify" && $0.body.hasPrefix("rm -rf build") } }
            let r = try await d.finish()
            #expect(left, "steps: \(Self.approvalEvents(r.stdout, id: id))\n\(r.stderr)")
            #expect(shown, "no notification was left")
            #expect(try await Self.resolutions(d.gw).isEmpty, "something was decided")
            #expect(try await d.status(of: id) == "pending", "the approval is not pending")
        }
    }

    @Test(.requires(.builtBinary, PrivatePulse.utilities))
    func `an approval decided elsewhere while it is read out is withdrawn aloud, and nothing is sent`() async throws {
        try await Self.withListeningDaemon { d in
            let id = try await d.request("rm -rf build")
            let reading = await RunLoopbackTests.waitFor(d.running, #""event":"speakingStarted""#, upTo: .seconds(45))
            let gw = d.gw
            _ = try await offPool { try gw.control(#"{"cmd":"approval-resolve","id":"\#(id)","decision":"deny","resolvedBy":"Phone"}"#) }
            let withdrawn = await Self.waitForStep(d.running, id: id, "withdrawn", upTo: .seconds(30))
            let back = await RunLoopbackTests.waitFor(d.running, #""reason":"approval done""#, upTo: .seconds(30))
            let r = try await d.finish()
            #expect(reading && withdrawn && back, "steps: \(Self.approvalEvents(r.stdout, id: id))\n\(r.stderr)")
            #expect(try await Self.resolutions(d.gw).map { $0.last } == [Optional("deny")], "only the other client decided")
            #expect(d.server.notifications.isEmpty, "a notification was left for an approval decided elsewhere")
            let said = RunCommandTests.events(r.stdout).filter { $0["event"] == "speakingStarted" }.compactMap { $0["sentence"]?.stringValue }
            #expect(said.count == 2 && said.last?.lowercased().contains("elsewhere") == true, "\(said)")
        }
    }
}
