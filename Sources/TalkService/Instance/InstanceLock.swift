import Foundation
import Glibc

/// One daemon per user: an exclusive `flock` on a file in the state folder, holding the owner's pid.
/// The kernel drops the lock when its holder dies, however it dies, so a lock file left by a SIGKILLed
/// daemon is found unlocked; its pid is then reported as cleared and replaced by ours.
package final class InstanceLock: Sendable {
    package enum Failure: Error, Equatable, CustomStringConvertible {
        case alreadyRunning(pid: Int32?)
        case io(String)

        package var description: String {
            switch self {
            case .alreadyRunning(let pid?): "openclaw-talk is already running (pid \(pid))"
            case .alreadyRunning(nil): "openclaw-talk is already running"
            case .io(let why): "daemon lock: \(why)"
            }
        }
    }

    package let path: String
    /// The pid a dead daemon left in the file, when there was one.
    package let clearedStalePid: Int32?
    private let fd: Int32

    private init(path: String, fd: Int32, clearedStalePid: Int32?) {
        self.path = path
        self.fd = fd
        self.clearedStalePid = clearedStalePid
    }

    package static func acquire(path: String, pid: Int32 = getpid()) throws(Failure) -> InstanceLock {
        // Never through a link: a planted one would have us truncate the file it points at.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .io("open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = readPid(fd)
            close(fd)
            if code == EWOULDBLOCK { throw .alreadyRunning(pid: holder) }
            throw .io("flock \(path): \(String(cString: strerror(code)))")
        }
        let previous = readPid(fd)
        let text = Array("\(pid)\n".utf8)
        guard ftruncate(fd, 0) == 0, pwrite(fd, text, text.count, 0) == text.count else {
            close(fd)
            throw .io("write \(path): \(String(cString: strerror(errno)))")
        }
        return InstanceLock(path: path, fd: fd, clearedStalePid: previous.flatMap { $0 == pid ? nil : $0 })
    }

    /// The pid recorded in the lock file, if a daemon holds it (for `status` and a second `start`).
    package static func holder(path: String) -> Int32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // A shared lock we can take means nobody holds the exclusive one. Unlocked explicitly: a child
        // spawned this instant may hold a copy of the descriptor until it execs, and close would leave it locked.
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        return readPid(fd)
    }

    /// Empties the file and releases the lock (a clean exit); a crash releases it too, leaving the pid.
    package func release() {
        _ = ftruncate(fd, 0)
        flock(fd, LOCK_UN)  // see `holder`: close alone would not release a lock a spawning child briefly shares
        close(fd)
    }

    private static func readPid(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        return Int32(String(decoding: buffer[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
