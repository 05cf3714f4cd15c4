import Glibc

/// posix_spawn for the processes the benchmarks and the tests start (the daemon, the reference Gateway, sound
/// servers, pactl, notification daemons). Foundation's `Process` is not used: on Linux its monitor thread blocks in
/// `wait4` on a long-lived child and never reaps a short one. The caller says where the child's standard streams go;
/// the child always starts with an empty signal mask (a Foundation thread blocks SIGTERM, and a child inherits the
/// mask: a server could then never be stopped) and with the stop signals at their default action, and it keeps none
/// of this process's descriptors but its three streams (see `closeFrom`).
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
        closeFrom(3, in: &actions)
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

    /// Closes, in the child, every descriptor from `first` on. Descriptors another thread has open at that moment are
    /// not all close-on-exec (Foundation's `Pipe`, and the socket pair through which `Process` learns that its child
    /// ended, are not): a long-lived child (a reference Gateway, a sound or D-Bus server) that inherited one held it
    /// open as long as it ran, so the reader of that pipe never saw its end and Foundation never saw that other child
    /// exit, and the tests waiting for either hung until the pass's time limit (CI10).
    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which Swift's Glibc module does not show; without it,
    /// each descriptor open now is closed by name.
    package static func closeFrom(_ first: Int32, in actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, first)
            return
        }
        guard let folder = opendir("/proc/self/fd") else { return }
        defer { closedir(folder) }
        let own = dirfd(folder)
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let fd = Int32(name), fd >= first, fd != own { posix_spawn_file_actions_addclose(&actions, fd) }
        }
    }

    /// A `waitpid` status as a shell shows it: the exit code, or 128 + the signal that ended the process.
    package static func exitStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
