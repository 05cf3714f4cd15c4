import Glibc

/// posix_spawn for the processes the benchmarks and the tests start (the daemon, the reference Gateway, sound
/// servers, pactl, notification daemons). Foundation's `Process` is not used: on Linux its monitor thread blocks in
/// `wait4` on a long-lived child and never reaps a short one. The caller says where the child's standard streams go;
/// the child always starts with an empty signal mask (a Foundation thread blocks SIGTERM, and a child inherits the
/// mask: a server could then never be stopped) and with the stop signals at their default action.
package enum PosixSpawn {
    /// Where one of the child's standard streams goes.
    package enum Stream: Sendable {
        case devNull
        /// A file: read for stdin; created or truncated, mode 0600, for stdout and stderr.
        case file(String)
        /// An open descriptor of this process, duplicated onto the stream.
        case descriptor(Int32)
        /// stderr only: wherever stdout goes.
        case sameAsStdout
    }

    /// Why posix_spawn failed: its errno and what it says.
    package struct Failure: Error, Sendable {
        package let code: Int32
        package var reason: String { String(cString: strerror(code)) }
    }

    /// The signals a child starts with at their default action, whatever this process does with them.
    static let stopSignals = [SIGTERM, SIGINT, SIGHUP, SIGPIPE]

    /// Starts `path` with `arguments` (argv[0] is `path`) and exactly `environment`; returns its pid.
    package static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String],
        stdin: Stream = .devNull, stdout: Stream, stderr: Stream
    ) throws(Failure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .devNull: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let file):
                posix_spawn_file_actions_addopen(&actions, fd, file, fd == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .descriptor(let source): posix_spawn_file_actions_adddup2(&actions, source, fd)
            case .sameAsStdout: posix_spawn_file_actions_adddup2(&actions, 1, fd)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        stopSignals.forEach { sigaddset(&defaults, $0) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw Failure(code: rc) }
        return pid
    }

    /// A `waitpid` status as a shell shows it: the exit code, or 128 + the signal that ended the process.
    package static func exitStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
