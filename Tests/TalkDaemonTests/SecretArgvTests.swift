import Foundation
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// What any user on the machine sees of a running `setup` or `run`: `/proc/PID/cmdline` (what `ps`
/// prints) must not hold the Gateway token when it was given by file, standard input or environment.
enum ProcessView {
    /// The command line of a running process as `ps` shows it (arguments joined by spaces).
    static func commandLine(_ pid: Int32) -> String {
        let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return String(decoding: bytes.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
}

@Suite(.serialized) struct SecretArgvTests {
    static let token = "argv-test-secret-7f3a"

    enum Way: String, CaseIterable, Sendable { case file, standardInput, environment }

    @Test(.requires(.builtBinary), arguments: Way.allCases)
    func `the token given by file, stdin or environment is not in ps output during setup`(_ way: Way) async throws {
        let gw = try await offPool {
            try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot, arguments: ["--token", Self.token, "--remote"])
        }
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        var arguments = ["setup", "--gateway", gw.startup.url]
        var input = BuiltCommand.Input.none
        var environment: [String: String] = [:]
        switch way {
        case .file:
            let file = command.home + "/token"
            try Data(Self.token.utf8).write(to: URL(fileURLWithPath: file))
            arguments += ["--token-file", file]
        case .standardInput:
            arguments += ["--token-file", "-"]
            input = .text(Self.token + "\n")
        case .environment:
            environment[SecretOptions_tokenVariable] = Self.token
        }
        let running = try command.start(arguments, input: input, environment: environment)
        // A pairing request shown: the Gateway has checked the token, and the process is still there to look at.
        #expect(await running.waitForStderr("Pairing request for the"), "stderr: \(running.stderrSoFar)")
        let shown = ProcessView.commandLine(running.process.processIdentifier)
        #expect(shown.contains("setup --gateway"), "not the setup process: \(shown)")
        #expect(!shown.contains(Self.token), "the token is visible in ps: \(shown)")
        // Node and operator sockets each ask; approve whatever is pending until setup ends.
        let approver = Task {
            while running.process.isRunning {
                _ = try? await offPool { try gw.control("approve") }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        let r = try await running.finish(timeout: .seconds(60))
        approver.cancel()
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(!(r.stdout + r.stderr).contains(Self.token))
    }
}

/// The environment variable's name, as the CLI defines it (kept literal so a rename breaks this test).
let SecretOptions_tokenVariable = "OPENCLAW_TALK_TOKEN"
