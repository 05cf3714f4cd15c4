import Foundation
import TalkTestSupport
import Testing

/// `bench soak` stopped by a signal once all its parts run (a user's Ctrl-C, a packager's timeout): the daemon,
/// the reference Gateway and the sound server it started end with it, none left running.
extension SoakCommandTests {
    @Test(.timeLimit(.minutes(4)), arguments: [(SIGTERM, "pulse"), (SIGINT, "pipewire")])
    func `a bench soak stopped by a signal leaves none of its processes running`(signal: Int32, server: String) async throws {
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let running = try command.start(
            ["bench", "soak", "--minutes", "5", "--server", server, "--repository", TestInputs.packageRoot],
            environment: ["PULSE_SERVER": ""])
        let soak = running.process.processIdentifier
        // Started once its daemon runs beside the Gateway and the sound server (the Pulse side of PipeWire).
        let parts = ["openclaw-talk run", "refgw.py", server == "pulse" ? "pulseaudio" : "pipewire-pulse"]
        var family: [pid_t: String] = [:]
        let deadline = ContinuousClock.now + .seconds(150)
        while ContinuousClock.now < deadline, running.process.isRunning {
            family = ProcessTree.descendants(of: soak)
            if parts.allSatisfy({ part in family.values.contains { $0.contains(part) } }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        // Whatever is left is killed at the end, so that a failure leaves nothing behind either.
        defer { for pid in family.keys where ProcessTree.isAlive(pid) { kill(pid, SIGKILL) } }
        try #require(parts.allSatisfy { part in family.values.contains { $0.contains(part) } },
                     "bench soak never had all its parts running: \(family); \(running.stderrSoFar.suffix(800))")
        kill(soak, signal)
        let outcome = try await running.finish(timeout: .seconds(60))
        #expect(outcome.status == 128 + signal, "\(outcome.stderr.suffix(800))")
        // It stops them before it exits: none may be running once it has gone (reaped or not by their new parent).
        let left = family.filter { ProcessTree.isAlive($0.key) && ProcessTree.commandLine($0.key) == $0.value }
        #expect(left.isEmpty, "still running after bench soak ended: \(left)")
    }
}
