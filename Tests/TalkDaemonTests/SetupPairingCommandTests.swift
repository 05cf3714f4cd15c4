import Foundation
import TalkBench
import TalkService
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `setup CODE`, `run` and `status` against a Gateway acting as a remote upstream one (refgw `--remote`): each role's
/// request shown with its approve command, success only with both roles, and the device that cannot chat says why.
@Suite(.serialized) struct SetupPairingCommandTests {
    static func gateway(_ extra: [String] = []) async throws -> ReferenceGatewayProcess {
        try await offPool { try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot, arguments: ["--remote"] + extra) }
    }

    static func code(_ gw: ReferenceGatewayProcess, profile: String) async throws -> String {
        try await offPool { try gw.control(#"{"cmd": "setup-code", "profile": "\#(profile)"}"#) }["setupCode"]?.stringValue ?? ""
    }

    /// Approves requests as they appear, up to `count`; returns their ids in order.
    static func approver(_ gw: ReferenceGatewayProcess, count: Int) -> Task<[String], any Error> {
        Task {
            var approved: [String] = []
            let deadline = ContinuousClock.now + .seconds(60)
            while approved.count < count, ContinuousClock.now < deadline {
                approved += try await offPool { try gw.control("approve") }["approved"]?.stringArray ?? []
                try await Task.sleep(for: .milliseconds(50))
            }
            return approved
        }
    }

    @Test(.requires(.builtBinary))
    func `a limited code: both requests shown with their approve commands, then both roles paired`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let approvals = Self.approver(gw, count: 2)
        let r = try await command.run(["setup", try await Self.code(gw, profile: "limited")])
        let ids = try await approvals.value
        #expect(r.status == 0, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(ids.count == 2)
        for (role, id) in zip(["node", "operator"], ids) {
            #expect(r.stderr.contains("Pairing request for the \(role) role") && r.stderr.contains("openclaw devices approve \(id)"),
                    "the \(role) role's request \(id) was shown: \(r.stderr)")
        }
        #expect(r.stdout.contains("Node role: paired") && r.stdout.contains("Operator role: paired (operator.approvals, operator.read, operator.write)"),
                "\(r.stdout)")
        try TestInput.requireSchemaCheck(reportedByGateway: gw.startup.schema, "the schema check of the frames sent")
        #expect(try await offPool { try gw.control("violations") }["count"] == 0)
    }

    @Test(.requires(.builtBinary))
    func `a node-only code without a credential pairs the node, fails and says how to give the operator one`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let r = try await command.run(["setup", try await Self.code(gw, profile: "node")], environment: ["OPENCLAW_TALK_TOKEN": ""])
        #expect(r.status == 1, "setup is not complete without the operator role: \(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("Node role: paired"))
        #expect(r.stdout.contains("no operator credential:") && r.stdout.contains("--token-file FILE"), "\(r.stdout)")
        #expect(r.stderr.contains("this setup code gives no operator role (node only)"), "\(r.stderr)")
    }

    @Test(.requires(.builtBinary))
    func `a node-only code and the shared token given once by file: the operator's role upgrade is approved, the token not kept`() async throws {
        let gw = try await Self.gateway(["--token", "the-shared-token"])
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let tokenFile = command.home + "/gateway-token"
        try "the-shared-token\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let approvals = Self.approver(gw, count: 1)
        let r = try await command.run(["setup", try await Self.code(gw, profile: "node"), "--token-file", tokenFile])
        let ids = try await approvals.value
        #expect(r.status == 0, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stderr.contains("Pairing request for the operator role (a role upgrade): \(ids.first ?? "?")"), "\(r.stderr)")
        let stored = try String(contentsOfFile: command.stateFolder + "/device-tokens.json", encoding: .utf8)
        #expect(!stored.contains("the-shared-token"), "only the operator's device token is kept")
        #expect(!(r.stdout + r.stderr).contains("the-shared-token"))
    }

    @Test(.requires(.builtBinary))
    func `run and status say the operator's pairing is pending, with the request to approve`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        var command = try BuiltCommand()
        command.extraEnvironment = ["OPENCLAW_TALK_TOKEN": ""]
        defer { command.removeHome() }
        let approvals = Self.approver(gw, count: 1)   // the node only
        let setup = try await command.run(["setup", try await Self.code(gw, profile: "limited"), "--timeout", "5"])
        _ = try await approvals.value
        #expect(setup.status == 1, "\(setup.stdout) \(setup.stderr)")
        let pending = try await offPool { try gw.control("pending") }["pending"]?.arrayValue ?? []
        let id = try #require(pending.first?["requestId"]?.stringValue, "the operator's request is still pending")
        #expect(setup.stdout.contains("operator pairing pending: approve \(id)"), "\(setup.stdout)")
        try await Self.expectStatus(command, saying: "operator pairing pending: approve \(id)")
    }

    @Test(.requires(.builtBinary))
    func `run and status say when the device has no operator credential`() async throws {
        let gw = try await Self.gateway()
        defer { gw.stop() }
        var command = try BuiltCommand()
        command.extraEnvironment = ["OPENCLAW_TALK_TOKEN": ""]
        defer { command.removeHome() }
        _ = try await command.run(["setup", try await Self.code(gw, profile: "node")])
        try await Self.expectStatus(command, saying: "no operator credential:")
    }

    /// `run --idle` on silent file devices: its stderr, and `status`, must say `text`.
    static func expectStatus(_ command: BuiltCommand, saying text: String) async throws {
        let input = command.home + "/silence.wav"
        try DaemonHarness.silence(seconds: 1).write(to: URL(fileURLWithPath: input))
        let daemon = try command.start(["run", "--idle", "--input", input, "--output", command.home + "/out.wav"])
        #expect(await daemon.waitForStderr(text), "run said: \(daemon.stderrSoFar)")
        var shown = ""
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            shown = try await command.run(["status"]).stdout
            if shown.contains(text) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(shown.contains(text), "status: \(shown)")
        daemon.process.terminate()
        _ = try await daemon.finish(timeout: .seconds(20))
    }
}
