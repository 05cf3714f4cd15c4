import ChildProcessSpawn
import Foundation
import Glibc
import Synchronization

/// How a benchmark starts the processes it runs (the daemon, the reference Gateway, sound servers, pactl):
/// posix_spawn with stdin on /dev/null, stdout and stderr to a file, a clean signal mask, and, for the long-lived
/// ones, a parent-death signal so that they end with the benchmark even when it is SIGKILLed (a caught signal
/// stops them in order; SIGKILL cannot be caught).
///
/// The parent-death signal is `prctl(PR_SET_PDEATHSIG)`, set in the child between fork and exec by util-linux's
/// `setpriv --pdeathsig` (posix_spawn and Foundation's `Process` run no code there). The kernel sends it when the
/// *thread* that forked the child ends, not the process: the cooperative pool's threads come and go, so every
/// such child is started on `onSpawnThread`, one thread that lives as long as the process.
package enum ChildSpawn {
    /// util-linux (Essential in Debian): it sets the signal and execs the command.
    static let setpriv = "/usr/bin/setpriv"

    /// Why a child could not be started.
    package enum StartError: Error, Equatable, CustomStringConvertible {
        case cannotStart(path: String, reason: String)
        case noSetpriv
        package var description: String {
            switch self {
            case .cannotStart(let path, let reason): "cannot start \(path): \(reason)"
            case .noSetpriv:
                "\(setpriv) (util-linux) is missing: a benchmark's children are started through it so they end with it"
            }
        }
    }

    /// The signal a child gets when its parent thread ends: SIGKILL (a crash's end), or SIGTERM for a child that
    /// must stop children of its own first (a shell script that traps it).
    package enum ParentDeathSignal: String, Sendable {
        case kill = "KILL"
        case term = "TERM"
    }

    /// `path arguments` as run through setpriv so that it gets `signal` when its parent thread ends.
    package static func dyingWithParent(_ path: String, _ arguments: [String], signal: ParentDeathSignal)
        throws(StartError) -> (path: String, arguments: [String])
    {
        guard FileManager.default.isExecutableFile(atPath: setpriv) else { throw .noSetpriv }
        return (setpriv, ["--pdeathsig", signal.rawValue, "--", path] + arguments)
    }

    /// Runs `body` (a child's start) on the spawn thread, the parent thread of every child that must die with
    /// this process. Blocking there is fine: it does nothing else.
    package static func onSpawnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { done in
            SpawnThread.shared.submit { done.resume(with: Result { try body() }) }
        }
    }

    /// Starts `path` (on the calling thread: see `onSpawnThread`); stdin is /dev/null, stdout and stderr go to the
    /// file at `outputPath` (created), or to `outputPath` and `errorPath` when both are given. With
    /// `parentDeathSignal`, the child gets that signal when its parent thread ends.
    package static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String], outputPath: String, errorPath: String? = nil,
        parentDeathSignal: ParentDeathSignal? = nil
    ) throws(StartError) -> pid_t {
        var (path, arguments) = (path, arguments)
        if let parentDeathSignal { (path, arguments) = try dyingWithParent(path, arguments, signal: parentDeathSignal) }
        do {
            return try PosixSpawn.spawn(
                path, arguments, environment: environment, stdout: .file(outputPath), stderr: errorPath.map { .file($0) } ?? .sameAsStdout)
        } catch {
            throw .cannotStart(path: path, reason: error.reason)
        }
    }

    /// The exit status (128 + signal when killed) once `pid` has ended and been reaped; nil while it runs.
    package static func exited(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        guard rc == pid else { return rc < 0 && errno == ECHILD ? -1 : nil }
        return PosixSpawn.exitStatus(status)
    }
}

/// The one thread that starts children meant to die with this process (see `ChildSpawn`). It never ends.
private final class SpawnThread: Sendable {
    static let shared = SpawnThread()
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let ready = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                ready.wait()
                let job = jobs.withLock { $0.removeFirst() }
                job()
            }
        }
        thread.name = "bench-spawn"
        thread.start()
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(job) }
        ready.signal()
    }
}
