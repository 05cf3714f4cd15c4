import Foundation
import Glibc

/// `start`'s side of running the daemon detached. The child is a fresh `posix_spawn` of the binary (a
/// forked copy of a multithreaded Swift process may deadlock before it execs), in its own session
/// (no controlling terminal), stdin from /dev/null, stdout and stderr appended to the log file. It
/// reports through a pipe on fd 3: `READY <pid>` once serving, or `ERROR <message>`.
package enum DetachedLaunch {
    /// Names the readiness pipe's descriptor in the child's environment.
    package static let readyVariable = "OPENCLAW_TALK_READY_FD"
    private static let readyDescriptor: Int32 = 3

    package enum Outcome: Equatable, Sendable {
        case ready(pid: Int32)
        case failed(message: String)
        /// The child ended (or closed the pipe) without a word; its exit status when it has exited.
        case exited(status: Int32?)
        case timedOut(pid: Int32)
    }

    package static func spawn(
        executable: String, arguments: [String], environment: [String: String], logPath: String,
        timeout: Duration = .seconds(60)
    ) throws -> Outcome {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw UnixSocket.Failure(call: "pipe", code: errno) }
        let (reader, writer) = (fds[0], fds[1])
        _ = fcntl(reader, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writer, F_SETFD, FD_CLOEXEC)  // dup2 onto fd 3 clears it for the child only
        defer { close(reader) }

        // Opened here (owner-only, an older file's mode fixed, no link followed) and handed over as stdout and stderr.
        let log: Int32
        do { log = try LogFile.open(logPath) } catch {
            close(writer)
            throw error
        }
        defer { close(log) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, log, 1)
        posix_spawn_file_actions_adddup2(&actions, log, 2)
        posix_spawn_file_actions_adddup2(&actions, writer, readyDescriptor)
        // Nothing else of ours reaches the daemon: a pipe or socket it inherited would stay open as long as it runs,
        // and whoever waits for that descriptor to close (a caller's `$(...)`, Foundation's Process watching `start`)
        // would wait for the daemon to end.
        closeFrom(readyDescriptor + 1, in: &actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Own session: no controlling terminal, so closing the terminal sends it no SIGHUP.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGPIPE, SIGHUP, SIGINT, SIGTERM] { sigaddset(&defaults, s) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(0x80 /* POSIX_SPAWN_SETSID */ | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var env = environment
        env[readyVariable] = String(readyDescriptor)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(writer)
        guard spawned == 0 else { throw UnixSocket.Failure(call: "posix_spawn \(executable)", code: spawned) }
        return awaitReport(from: reader, child: pid, timeout: timeout)
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which Swift's Glibc module does not show; without
    /// it, each descriptor open now is closed by name.
    private static func closeFrom(_ first: Int32, in actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, first)
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap({ Int32($0) }) where fd >= first {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }

    private static func awaitReport(from fd: Int32, child: pid_t, timeout: Duration) -> Outcome {
        let deadline = ContinuousClock.now + timeout
        var received: [UInt8] = []
        while !received.contains(UInt8(ascii: "\n")) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .timedOut(pid: child) }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(min(left.components.seconds * 1000 + 1, 60_000))
            let n = poll(&p, 1, ms)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 512)
            let got = read(fd, &buffer, buffer.count)
            if got > 0 { received += buffer[..<got] } else if got < 0 && errno == EINTR { continue } else { break }
        }
        let line = String(decoding: received.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        if line.hasPrefix("READY "), let pid = Int32(line.dropFirst(6)) { return .ready(pid: pid) }
        if line.hasPrefix("ERROR ") { return .failed(message: String(line.dropFirst(6))) }
        // Closed without a word: the child died (or exec failed). Collect its status if it is gone.
        var status: Int32 = 0
        for _ in 0..<50 {
            if waitpid(child, &status, WNOHANG) == child {
                let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                return .exited(status: code)
            }
            usleep(20_000)
        }
        return .exited(status: nil)
    }
}

/// The detached child's side of the readiness pipe: found from the environment, used once.
package final class ReadinessReport: Sendable {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// The pipe `start` waits on, when this process was started by it; the variable is removed so a
    /// process the daemon starts does not inherit it.
    package static func fromEnvironment() -> ReadinessReport? {
        guard let text = getenv(DetachedLaunch.readyVariable).map({ String(cString: $0) }), let fd = Int32(text),
              fd > 2, fcntl(fd, F_GETFD) >= 0 else { return nil }
        unsetenv(DetachedLaunch.readyVariable)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return ReadinessReport(fd: fd)
    }

    package func ready(pid: Int32 = getpid()) { say("READY \(pid)") }

    package func failed(_ message: String) { say("ERROR " + message.map { $0.isNewline ? " " : $0 }) }

    private func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
