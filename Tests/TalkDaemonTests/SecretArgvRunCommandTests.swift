import Foundation
import TalkBench
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
        // The command line as `ps` shows it, read over and over for as long as the run lives (a run of one turn from
        // a file can end within seconds of connecting; a finished process has none left to read). That it was
        // connected with the token is shown afterwards by the Gateway: the utterance reached it as a transcript.
        var shown = ""
        var leaked: String?
        let hangBound = ContinuousClock.now + .seconds(90)
        while running.process.isRunning, ContinuousClock.now < hangBound {
            let now = ProcessView.commandLine(running.process.processIdentifier)
            if now.contains(Self.token) { leaked = now }
            if !now.isEmpty { shown = now }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(shown.contains("run --gateway"), "not the run process: \(shown)")
        #expect(leaked == nil, "the token is visible in ps: \(leaked ?? "")")
        let r = try await running.finish(timeout: .seconds(90))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(!(r.stdout + r.stderr).contains(Self.token))
        let sent = try await RunLoopbackTests.transcripts(gw)
        #expect(!sent.isEmpty, "the run never reached the Gateway with its token: \(r.stderr)")
    }
}
