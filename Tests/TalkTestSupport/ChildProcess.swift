import Foundation

/// posix_spawn and waitpid, for the test servers, pactl and other tools. Foundation's `Process` is not used: on Linux its
/// monitor thread blocks in `wait4` on a long-lived child (the server) and never reaps a short one (pactl).
package enum ChildProcess {
    /// Starts `path` with `arguments` and `environment`; stdout goes to `stdoutFD` (default /dev/null), stderr to
    /// the file at `stderrPath` (created; default /dev/null).
    /// `mergeStderr` sends stderr where stdout goes instead; stdin reads `stdinPath` (default /dev/null).
    package static func spawn(_ path: String, _ arguments: [String], environment: [String: String], stdoutFD: Int32? = nil,
                              stderrPath: String? = nil, mergeStderr: Bool = false, stdinPath: String? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdinPath ?? "/dev/null", O_RDONLY, 0)
        if let stdoutFD {
            posix_spawn_file_actions_adddup2(&actions, stdoutFD, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        if mergeStderr {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else if let stderrPath {
            posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        // A clean signal mask: the spawning thread (a Foundation thread) blocks SIGTERM, and a child inherits
        // that; the PipeWire supervisor script must get the SIGTERM that stops it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        [SIGTERM, SIGINT, SIGHUP, SIGPIPE].forEach { sigaddset(&defaults, $0) }
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
        guard rc == 0 else { throw CommandFailure("cannot start \(path): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// Waits for `pid` to end; returns its exit status (or 128 + signal).
    @discardableResult
    package static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Runs a command to completion on a thread of its own, never blocking the cooperative pool (two threads here,
    /// shared by every suite running at once): its exit status and stdout (with stderr, `mergeStderr`). Foundation's
    /// `waitUntilExit` instead spins on the calling thread until Foundation notices the exit, which it did not always.
    package static func output(_ path: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                               stderrPath: String? = nil, mergeStderr: Bool = false, stdinPath: String? = nil) async throws
        -> (status: Int32, output: String)
    {
        try await offPool {
            try run(path, arguments, environment: environment, stderrPath: stderrPath, mergeStderr: mergeStderr, stdinPath: stdinPath)
        }
    }

    /// Runs a command to completion; returns its exit status and stdout. Blocking: call it off the cooperative pool.
    package static func run(_ path: String, _ arguments: [String], environment: [String: String], stderrPath: String? = nil,
                            mergeStderr: Bool = false, stdinPath: String? = nil) throws -> (Int32, String) {
        var fds: [Int32] = [0, 0]
        // Close-on-exec, so a server spawned meanwhile by a test running beside this one does not inherit the
        // write end and hold it open (the read below would then wait as long as that server runs).
        guard pipe(&fds) == 0 else { throw CommandFailure("pipe failed: errno \(errno)") }
        fds.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
        let pid: pid_t
        do {
            pid = try spawn(path, arguments, environment: environment, stdoutFD: fds[1], stderrPath: stderrPath,
                            mergeStderr: mergeStderr, stdinPath: stdinPath)
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        close(fds[1])
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fds[0], &buffer, buffer.count)
            if n > 0 { output.append(contentsOf: buffer[0..<n]) } else if n == 0 || errno != EINTR { break }
        }
        close(fds[0])
        return (wait(pid), String(decoding: output, as: UTF8.self))
    }
}
