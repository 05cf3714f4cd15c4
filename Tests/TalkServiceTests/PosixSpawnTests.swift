import ChildProcessSpawn
import Foundation
import TalkTestSupport
import Testing

/// The children tests and benchmarks start through `PosixSpawn` keep none of this process's descriptors but their
/// three streams. A descriptor another thread holds at that moment need not be close-on-exec (Foundation's `Pipe`
/// and the socket pair `Process` watches its child through are not): a server started then kept it open as long as
/// it ran, so the reader of that pipe, or the wait for that other child's end, waited as long (CI10's pass 1 stopped
/// by its time limit: CompletionScriptTests reading a shell's output, three tests waiting for the built binary).
@Suite struct PosixSpawnTests {
    @Test func `a pipe's reader sees its end while a child started meanwhile runs on`() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)   // as Foundation's Pipe makes it: not close-on-exec
        defer { close(fds[0]) }
        // A long-lived child, started while this process holds the pipe's write end.
        let child = try PosixSpawn.spawn("/bin/sleep", ["60"], environment: [:], stdout: .devNull, stderr: .devNull)
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        let held = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(child)/fd")) ?? []
        close(fds[1])
        // The end of the pipe comes at once (the bound only catches a reader that would wait as long as the child runs).
        var ready = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
        let polled = poll(&ready, 1, 5_000)
        var byte: UInt8 = 0
        let read = polled == 1 ? Glibc.read(fds[0], &byte, 1) : -1
        #expect(polled == 1 && read == 0, "no end of the pipe within 5 s: the child holds its write end (its descriptors: \(held.sorted()))")
        #expect(Set(held) == ["0", "1", "2"], "the child's descriptors: \(held.sorted())")
    }

    /// The test support's waits for a tool are bounded: one that hangs is killed and its test fails, naming it.
    @Test func `a tool that does not end within its bound is killed and named`() throws {
        let started = ContinuousClock.now
        let error = #expect(throws: CommandFailure.self) {
            try ChildProcess.run("/bin/sh", ["-c", "echo waiting; exec sleep 60"], environment: [:], timeout: .seconds(1))
        }
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(error?.description.contains("/bin/sh -c echo waiting; exec sleep 60 did not end within 1.0 seconds (killed)") == true,
                "\(String(describing: error))")
        #expect(error?.description.contains("'waiting\n'") == true, "\(String(describing: error))")
    }
}
