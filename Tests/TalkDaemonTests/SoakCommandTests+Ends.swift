import Foundation
import TalkTestSupport
import Testing

/// How a `bench soak` ends when it is not asked to: SIGKILLed itself (an OOM killer, `timeout -s KILL`, a CI job
/// cancelled), it cannot stop its parts, so they must die with it; and when its daemon dies, the soak has nothing
/// left to measure and must say so at once.
extension SoakCommandTests {
    /// Starts `bench soak` on PulseAudio for ten minutes and waits until its daemon, the Gateway and the sound
    /// server run; returns them with the running soak.
    private func startedSoak(_ command: BuiltCommand) async throws -> (BuiltCommand.Running, [pid_t: String]) {
        let running = try command.start(
            ["bench", "soak", "--minutes", "10", "--repository", TestInputs.packageRoot], environment: ["PULSE_SERVER": ""])
        let parts = ["openclaw-talk run", "refgw.py", "pulseaudio"]
        var family: [pid_t: String] = [:]
        let deadline = ContinuousClock.now + .seconds(150)
        while ContinuousClock.now < deadline, running.process.isRunning {
            family = ProcessTree.descendants(of: running.process.processIdentifier)
            if parts.allSatisfy({ part in family.values.contains { $0.contains(part) } }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        try #require(parts.allSatisfy { part in family.values.contains { $0.contains(part) } },
                     "bench soak never had all its parts running: \(family); \(running.stderrSoFar.suffix(800))")
        return (running, family)
    }

    @Test(.timeLimit(.minutes(4)))
    func `a SIGKILLed bench soak leaves none of its processes running`() async throws {
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let (running, family) = try await startedSoak(command)
        // Whatever is left is killed at the end, so that a failure leaves nothing behind either.
        defer { for pid in family.keys where ProcessTree.isAlive(pid) { kill(pid, SIGKILL) } }
        kill(running.process.processIdentifier, SIGKILL)
        _ = try await running.finish(timeout: .seconds(30))
        // The kernel sends their parent-death signal as the soak's threads end: they are gone within moments,
        // or never (the 20 s only bounds the wait).
        func left() -> [pid_t: String] {
            family.filter { ProcessTree.isAlive($0.key) && ProcessTree.commandLine($0.key) == $0.value }
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while !left().isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(left().isEmpty, "still running after bench soak was SIGKILLed: \(left())")
    }

    @Test(.timeLimit(.minutes(4)))
    func `a bench soak whose daemon dies stops at once with an error saying so`() async throws {
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let (running, family) = try await startedSoak(command)
        defer { for pid in family.keys where ProcessTree.isAlive(pid) { kill(pid, SIGKILL) } }
        let daemon = try #require(family.first { $0.value.contains("openclaw-talk run") }?.key)
        // The soak is under way once it says so (the daemon listens and is connected): then the daemon dies.
        try #require(await running.waitForStderr("soaking for", timeout: .seconds(150)),
                     "the soak never began: \(running.stderrSoFar.suffix(800))")
        kill(daemon, SIGKILL)
        // Ten minutes were asked for: a soak that goes on without its daemon is killed at 30 s and fails here.
        let outcome = try await running.finish(timeout: .seconds(30))
        #expect(outcome.status == 1, "\(outcome.stderr.suffix(800))")
        #expect(outcome.stderr.contains("the daemon exited (status 137)"), "\(outcome.stderr.suffix(800))")
    }
}
