import ChildProcessSpawn
import Foundation

/// The test servers, pactl and other tools as children (`PosixSpawn`), waited for off the cooperative pool.
package enum ChildProcess {
    /// Starts `path` with `arguments` and `environment`; stdout goes to `stdoutFD` (default /dev/null), stderr to
    /// the file at `stderrPath` (created; default /dev/null).
    /// `mergeStderr` sends stderr where stdout goes instead; stdin reads `stdinPath` (default /dev/null).
    package static func spawn(_ path: String, _ arguments: [String], environment: [String: String], stdoutFD: Int32? = nil,
                              stderrPath: String? = nil, mergeStderr: Bool = false, stdinPath: String? = nil) throws -> pid_t {
        let stderr: PosixSpawn.Stream = mergeStderr ? .sameAsStdout : stderrPath.map { .file($0) } ?? .devNull
        do {
            return try PosixSpawn.spawn(
                path, arguments, environment: environment, stdin: stdinPath.map { .file($0) } ?? .devNull,
                stdout: stdoutFD.map { .descriptor($0) } ?? .devNull, stderr: stderr)
        } catch {
            throw CommandFailure("cannot start \(path): \(error.reason)")
        }
    }

    /// Waits for `pid` to end; returns its exit status (or 128 + signal).
    @discardableResult
    package static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return PosixSpawn.exitStatus(status)
    }

    /// Ends a server child: SIGTERM, SIGKILL if it has not ended within `bound`, and the exit reaped. Bounded, as tests
    /// call it from a `defer`, on the cooperative pool.
    package static func end(_ pid: pid_t, within bound: Duration) {
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + bound
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard ContinuousClock.now < deadline else {
                kill(pid, SIGKILL)
                wait(pid)
                return
            }
            usleep(5_000)
        }
    }

    /// Runs a command to completion on a thread of its own, never blocking the cooperative pool (two threads here,
    /// shared by every suite running at once): its exit status and stdout (with stderr, `mergeStderr`). Foundation's
    /// `waitUntilExit` instead spins on the calling thread until Foundation notices the exit, which it did not always.
    /// A command still running after `timeout` is killed and the call throws (see `run`).
    package static func output(_ path: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                               stderrPath: String? = nil, mergeStderr: Bool = false, stdinPath: String? = nil,
                               timeout: Duration = defaultTimeout) async throws
        -> (status: Int32, output: String)
    {
        try await offPool {
            try run(path, arguments, environment: environment, stderrPath: stderrPath, mergeStderr: mergeStderr, stdinPath: stdinPath,
                    timeout: timeout)
        }
    }

    /// How long a command may run before it counts as hung: the tools tests run end in seconds on a loaded machine.
    package static let defaultTimeout: Duration = .seconds(120)

    /// Runs a command to completion; returns its exit status and stdout. Blocking: call it off the cooperative pool.
    /// Its output is read until its end or `timeout`: a command that has not ended by then is killed (SIGKILL) and the
    /// call throws, saying what it printed, so a hung tool fails its test by name instead of holding the pass.
    package static func run(_ path: String, _ arguments: [String], environment: [String: String], stderrPath: String? = nil,
                            mergeStderr: Bool = false, stdinPath: String? = nil, timeout: Duration = defaultTimeout) throws -> (Int32, String) {
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
        defer { close(fds[0]) }
        let deadline = ContinuousClock.now + timeout
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        func hung() -> CommandFailure {
            kill(pid, SIGKILL)
            wait(pid)
            let command = ([path] + arguments).joined(separator: " ")
            return CommandFailure("\(command.prefix(300)) did not end within \(timeout) (killed); its output so far: "
                                  + "'\(String(decoding: output.suffix(2000), as: UTF8.self))'")
        }
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw hung() }
            var ready = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(min(left.components.seconds * 1000 + 1, 1000)))
            if polled < 0 && errno != EINTR { break }
            guard polled > 0 else { continue }
            let n = read(fds[0], &buffer, buffer.count)
            if n > 0 { output.append(contentsOf: buffer[0..<n]) } else if n == 0 || errno != EINTR { break }
        }
        // Its output has ended; so has the command, nearly always (one that closed stdout and runs on is waited for too).
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { return (-1, String(decoding: output, as: UTF8.self)) }
            guard ContinuousClock.now < deadline else { throw hung() }
            usleep(2_000)
        }
        return (PosixSpawn.exitStatus(status), String(decoding: output, as: UTF8.self))
    }
}

extension ChildProcess {
    /// A child started through /usr/bin/env with pipes to its stdin and from its stdout (stderr discarded): a test
    /// server that prints a line when it is ready and takes commands on stdin (closing it tells the child to end).
    package struct Piped: Sendable {
        package let pid: pid_t
        package let stdout: FileHandle
        package let stdin: FileHandle

        /// The next line it prints (without its newline), or nil at its end, on a line its end cut short, or when
        /// `bound` passes first. Blocking: call it off the cooperative pool.
        package func readLine(within bound: Duration) -> String? {
            let deadline = ContinuousClock.now + bound
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return nil }
                var ready = pollfd(fd: stdout.fileDescriptor, events: Int16(POLLIN), revents: 0)
                let polled = poll(&ready, 1, Int32(min(left.components.seconds * 1000 + 1, 1000)))
                if polled < 0 && errno != EINTR { return nil }
                guard polled > 0 else { continue }
                let n = read(stdout.fileDescriptor, &byte, 1)
                if n < 0 && errno == EINTR { continue }
                guard n == 1 else { return nil }
                if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
        }
    }

    /// Starts `arguments` (a program on `environment`'s PATH and its arguments) with piped stdin and stdout.
    package static func spawnPiped(_ arguments: [String], environment: [String: String]) throws -> Piped {
        var output: [Int32] = [0, 0], input: [Int32] = [0, 0]
        guard pipe(&output) == 0 else { throw CommandFailure("pipe failed: errno \(errno)") }
        guard pipe(&input) == 0 else {
            output.forEach { close($0) }
            throw CommandFailure("pipe failed: errno \(errno)")
        }
        // This side's ends close on exec, so a server a test beside this one starts meanwhile does not hold them open.
        [output[0], input[1]].forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
        // The child's ends: it has its own copies once started, and neither is needed here if it was not.
        defer {
            close(output[1])
            close(input[0])
        }
        do {
            let pid = try PosixSpawn.spawn(
                "/usr/bin/env", arguments, environment: environment, stdin: .descriptor(input[0]),
                stdout: .descriptor(output[1]), stderr: .devNull)
            return Piped(pid: pid, stdout: FileHandle(fileDescriptor: output[0], closeOnDealloc: true),
                         stdin: FileHandle(fileDescriptor: input[1], closeOnDealloc: true))
        } catch {
            close(output[0])
            close(input[1])
            throw CommandFailure("cannot start \(arguments.first ?? "nothing"): \(error.reason)")
        }
    }
}
