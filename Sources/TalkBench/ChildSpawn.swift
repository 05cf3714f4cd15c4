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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if let errorPath {
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // A clean signal mask and default dispositions: a Foundation thread blocks SIGTERM, a child would inherit it.
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
        guard rc == 0 else { throw .cannotStart(path: path, reason: String(cString: strerror(rc))) }
        return pid
    }

    /// The exit status (128 + signal when killed) once `pid` has ended and been reaped; nil while it runs.
    package static func exited(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        guard rc == pid else { return rc < 0 && errno == ECHILD ? -1 : nil }
        return exitStatus(status)
    }

    /// A `waitpid` status as a shell shows it: the exit code, or 128 + the signal that ended the process.
    static func exitStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
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
