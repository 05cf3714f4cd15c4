import Foundation
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `run --gateway URL --token-file FILE` pairs and talks without the token ever being in `ps` output.
/// Runs the recogniser on a clip, so it belongs to `make test`'s second pass (its name ends in RunCommandTests).
@Suite(.serialized) struct SecretArgvRunCommandTests {
    static let token = "run-argv-secret-91c2"

    @Test(.requires(.builtBinary, RunCommandTests.clip))
    func `run given the token by file keeps it out of ps output while connected`() async throws {
        let gw = try await offPool {
            try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot, arguments: ["--token", Self.token, "--auto-approve"])
        }
        defer { gw.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let file = command.home + "/token"
        try Data((Self.token + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let running = try command.start([
            "run", "--gateway", gw.startup.url, "--token-file", file, "--input", try RunCommandTests.clip.path(),
            "--output", command.home + "/out.wav", "--grammar", RunCommandTests.pocketsphinxData + "/goforward.gram",
            "--seconds", "20", "--max-turns", "1",
        ])
        // Connected with the token: the Gateway lists an authenticated node while the process runs. The command
        // line is read while it runs, before each look at the Gateway: a run of one turn from a file can end as soon
        // as it is connected, and a finished process has no command line left to read.
        var connected = false
        var shown = ""
        for _ in 0..<400 where !connected && running.process.isRunning {
            let now = ProcessView.commandLine(running.process.processIdentifier)
            if !now.isEmpty { shown = now }
            let clients = try await offPool { try gw.control("clients") }["clients"]?.arrayValue ?? []
            connected = clients.contains { $0["authenticated"]?.boolValue == true && $0["role"]?.stringValue == "node" }
            if !connected { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(connected, "stderr: \(running.stderrSoFar)")
        #expect(shown.contains("run --gateway"), "not the run process: \(shown)")
        #expect(!shown.contains(Self.token), "the token is visible in ps: \(shown)")
        let r = try await running.finish(timeout: .seconds(90))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(!(r.stdout + r.stderr).contains(Self.token))
    }
}
