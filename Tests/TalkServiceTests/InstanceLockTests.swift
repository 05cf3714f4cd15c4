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
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: try Self.python3.path())
        holder.arguments = ["-c", """
            import fcntl, os, sys, time
            f = open(sys.argv[1], "a+")
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0); f.truncate(); f.write(f"{os.getpid()}\\n"); f.flush()
            print("locked", flush=True)
            time.sleep(600)
            """, path]
        let out = Pipe()
        holder.standardOutput = out
        try holder.run()
        let line = try await offPool { String(decoding: out.fileHandleForReading.availableData, as: UTF8.self) }
        #expect(line.hasPrefix("locked"))
        let pid = holder.processIdentifier
        #expect(throws: InstanceLock.Failure.alreadyRunning(pid: pid)) { try InstanceLock.acquire(path: path) }

        kill(pid, SIGKILL)
        try await offPool { holder.waitUntilExit() }
        #expect(holder.terminationReason == .uncaughtSignal)
        let lock = try InstanceLock.acquire(path: path)
        #expect(lock.clearedStalePid == pid)
        #expect(InstanceLock.holder(path: path) == getpid())
        lock.release()
    }
}
