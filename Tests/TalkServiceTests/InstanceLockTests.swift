import Foundation
import Glibc
import TalkTestSupport
import Testing
@testable import TalkService

@Suite struct InstanceLockTests {
    static let python3 = TestInput.program("python3", package: "python3")

    @Test func aSecondInstanceIsRefusedWithThePidOfTheFirst() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/daemon.lock"
        let first = try InstanceLock.acquire(path: path)
        #expect(first.clearedStalePid == nil)
        #expect(throws: InstanceLock.Failure.alreadyRunning(pid: getpid())) { try InstanceLock.acquire(path: path) }
        #expect(InstanceLock.holder(path: path) == getpid())
        #expect(InstanceLock.Failure.alreadyRunning(pid: 42).description == "openclaw-talk is already running (pid 42)")
        first.release()
        let again = try InstanceLock.acquire(path: path)
        #expect(again.clearedStalePid == nil)
        again.release()
        #expect(InstanceLock.holder(path: path) == nil)
    }

    /// Another process holds the lock as the daemon would; after SIGKILL its lock (and pid) is left
    /// behind, found dead, and cleared.
    @Test(.requires(python3))
    func aLockLeftByAKilledDaemonIsCleared() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/daemon.lock"
        // Spawned and waited for by pid, not through Foundation's Process: its waitUntilExit has no bound, and it
        // learns of the exit through a socket another test's child could hold (PosixSpawnTests).
        let pid = try ChildProcess.spawn(try Self.python3.path(), ["-c", """
            import fcntl, os, sys, time
            f = open(sys.argv[1], "a+")
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0); f.truncate(); f.write(f"{os.getpid()}\\n"); f.flush()
            time.sleep(600)
            """, path], environment: ProcessInfo.processInfo.environment)
        // It holds the lock once its pid is in the file (the bound only catches a python that never gets there).
        let deadline = ContinuousClock.now + .seconds(30)
        while (try? String(contentsOfFile: path, encoding: .utf8)) != "\(pid)\n", ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try #require((try? String(contentsOfFile: path, encoding: .utf8)) == "\(pid)\n", "the holder never wrote its pid")
        #expect(throws: InstanceLock.Failure.alreadyRunning(pid: pid)) { try InstanceLock.acquire(path: path) }

        kill(pid, SIGKILL)
        #expect(try await offPool { ChildProcess.wait(pid) } == 128 + SIGKILL)   // SIGKILL ends it at once
        let lock = try InstanceLock.acquire(path: path)
        #expect(lock.clearedStalePid == pid)
        #expect(InstanceLock.holder(path: path) == getpid())
        lock.release()
    }
}
