import Foundation
import Glibc
import TalkTestSupport
import Testing

@testable import SessionBridge

/// A second SIGTERM (or SIGINT) while the first one's clean stop is still under way ends the process at once: a
/// user who asks twice has waited long enough. Its name ends in RunCommandTests: `make test`'s second pass.
@Suite(.serialized) struct SecondSignalRunCommandTests {
    @Test(.requires(.builtBinary, RunCommandTests.clip), arguments: [SIGTERM, SIGINT])
    func `a second signal while stopping exits at once`(signal: Int32) async throws {
        let gw = try await RunCommandTests.gateway()
        defer { gw.stop() }
        let long = "This reply goes on for a long time. " + String(repeating: "It has many sentences to say. ", count: 12)
        _ = try #require(try await offPool { try gw.control(#"{"cmd": "chat-script", "reply": "\#(long)"}"#) }["ok"] == true)
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let running = try command.start(try RunCommandTests.arguments(gw, output: command.home + "/out.wav"))
        let deadline = ContinuousClock.now + .seconds(90)
        while !running.stdoutSoFar.contains(#""event":"speakingStarted""#), running.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try #require(running.stdoutSoFar.contains(#""event":"speakingStarted""#), "never spoke: \(running.stderrSoFar)")
        // The Gateway stops answering, so the clean stop waits on it (talk.mode off goes unanswered until the request's
        // timeout): the reply itself no longer holds the stop up (its talk.speak requests are cancelled).
        gw.freeze(true)
        defer { gw.freeze(false) }
        // The first starts the clean stop (closing the devices, talk.mode off, the sockets), and says so; the second
        // comes once it has been taken (two sent at once are one: the kernel keeps one of a kind pending).
        let pid = running.process.processIdentifier
        kill(pid, signal)
        #expect(await running.waitForStderr("stopping (a second"), "\(running.stderrSoFar.suffix(300))")
        kill(pid, signal)
        let r = try await running.finish(timeout: .seconds(30))
        #expect(r.status == 128 + signal, "exit status \(r.status); stderr: \(r.stderr.suffix(500))")
        #expect(r.stderr.contains("exiting now"), "\(r.stderr.suffix(500))")
    }
}
