import Foundation
import Glibc
import Synchronization

/// The daemon's log file under `$XDG_STATE_HOME/openclaw-talk/`, size-capped: once over `maxBytes` it
/// becomes `daemon.log.1` (older ones shift up to `daemon.log.<keep>`, the oldest is dropped) and a new
/// file takes its place. Logging writes to stderr, so the file is wired to the standard descriptors
/// and rotation re-points them; nothing else in the process needs to know.
package struct LogFile: Sendable {
    package let path: String
    package let maxBytes: Int
    package let keep: Int

    package init(path: String, maxBytes: Int = 8 << 20, keep: Int = 3) {
        self.path = path
        self.maxBytes = maxBytes
        self.keep = max(1, keep)
    }

    /// Points `streams` (stdout and stderr; stdin goes to /dev/null when listed) at the log file. Used when
    /// the terminal went away: writes to it would fail with EIO or raise SIGPIPE.
    package func attach(streams: [Int32] = [0, 1, 2]) throws {
        let fd = try Self.open(path)
        defer { close(fd) }
        let null = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if null >= 0 { close(null) } }
        for s in streams {
            let source = s == 0 ? null : fd
            guard source >= 0, dup2(source, s) >= 0 else { throw UnixSocket.Failure(call: "dup2", code: errno) }
        }
    }

    /// Rotates when the file `streams` write to is the log and has grown past the cap. Call it now and
    /// then (the heartbeat timer does); returns whether it rotated.
    @discardableResult
    package func rotateIfNeeded(streams: [Int32] = [1, 2]) throws -> Bool {
        guard let first = streams.first else { return false }
        var open = stat(), named = stat()
        guard fstat(first, &open) == 0, stat(path, &named) == 0,
              open.st_ino == named.st_ino, open.st_dev == named.st_dev, Int(open.st_size) > maxBytes else { return false }
        shift()
        try attach(streams: streams.filter { $0 != 0 })
        return true
    }

    /// Opens the log for appending, owner-only: created 0600, an older file made 0600 too (it holds what was said and
    /// heard, and may have been made under another umask), never through a link.
    package static func open(_ path: String) throws -> Int32 {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw UnixSocket.Failure(call: "open \(path)", code: errno) }
        guard fchmod(fd, 0o600) == 0 else {
            let code = errno
            close(fd)
            throw UnixSocket.Failure(call: "chmod \(path)", code: code)
        }
        return fd
    }

    /// Moves `log` → `log.1` → … → `log.<keep>`, dropping the oldest.
    package func shift() {
        unlink("\(path).\(keep)")
        for n in stride(from: keep - 1, through: 1, by: -1) { rename("\(path).\(n)", "\(path).\(n + 1)") }
        rename(path, "\(path).1")
    }
}

/// SIGHUP without dying: when the controlling terminal goes away the daemon keeps its Talk session and
/// moves its output to the log file; in detached mode the same signal means "reload the config".
/// SIGPIPE is ignored so a write to a dead terminal or a gone client fails with an error instead.
/// The signal handler only writes a byte to a pipe (all it may safely do); a thread of its own reads
/// the pipe and calls `onHangup`. One watch per process.
package final class HangupWatch: Sendable {
    private let reader: Int32

    package init(onHangup: @escaping @Sendable () -> Void) throws {
        let (reader, writer) = try UnixSocket.wakePipe()
        self.reader = reader
        hangupPipeWriter.store(writer, ordering: .releasing)
        signal(SIGPIPE, SIG_IGN)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            var byte: UInt8 = 1
            _ = write(hangupPipeWriter.load(ordering: .acquiring), &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGHUP, &action, nil)
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                var p = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, -1) >= 0 || errno == EINTR else { return }
                let n = read(reader, &buffer, buffer.count)
                if n > 0 { onHangup() } else if n == 0 || (errno != EAGAIN && errno != EINTR) { return }
            }
        }
        thread.name = "sighup"
        thread.start()
    }
}

private let hangupPipeWriter = Atomic<Int32>(-1)
