#if canImport(Glibc)
import Glibc
#endif

/// What to ask rtkit for, worked out from what its daemon allows and the process's `RLIMIT_RTTIME`: a value with no
/// I/O (`RealtimeKitClient` reads the inputs and carries it out).
///
/// rtkit grants realtime only to a process whose `RLIMIT_RTTIME` hard limit is set, at or below its `RTTimeUSecMax`
/// (it reads `/proc/<pid>/limits`), and only up to its `MaxRealtimePriority`. `RLIMIT_RTTIME` bounds how long a
/// realtime thread of the process may run without blocking: past it the kernel kills the process (SIGKILL at the
/// hard limit), which is how a realtime thread stuck in a loop cannot hold a core of a desktop.
package struct RealtimeKitRequest: Equatable, Sendable {
    /// The `RLIMIT_RTTIME` set when the process has none rtkit accepts, in µs: 200 ms, rtkit's default
    /// `RTTimeUSecMax` (so any rtkit with its defaults accepts it) and PulseAudio's own `rlimit-rttime`. The audio
    /// threads block every 10-20 ms after well under a millisecond of work, so only a thread stuck in a loop reaches
    /// it; the longest burst they run without blocking is a backlog after the process was stopped (the canceller
    /// cleaning up to 500 queued frames at about 0.36 ms each in a debug build), hence the most rtkit allows, up to this.
    package static let preferredTimeLimitMicroseconds: UInt64 = 200_000

    /// The priority asked for: the one wanted, lowered to rtkit's `MaxRealtimePriority`.
    package let priority: Int32
    /// The `RLIMIT_RTTIME` to set first (soft and hard, µs), nil when the process's own already satisfies rtkit.
    package let newTimeLimit: TimeLimit?

    package struct TimeLimit: Equatable, Sendable {
        package var soft: UInt64
        package var hard: UInt64

        package init(soft: UInt64, hard: UInt64) {
            self.soft = soft
            self.hard = hard
        }
    }

    /// `current` is the process's `RLIMIT_RTTIME` (`RLIM_INFINITY` as `UInt64.max`). Throws when rtkit would give
    /// nothing: a `MaxRealtimePriority` under 1, or an `RTTimeUSecMax` of 0 or less.
    package init(wanted: Int32, maxPriority: Int32, maxTimeMicroseconds: Int64, current: TimeLimit) throws(RealtimeKitError) {
        guard maxPriority >= 1 else { throw .nothingAllowed("its MaxRealtimePriority is \(maxPriority)") }
        guard maxTimeMicroseconds > 0 else { throw .nothingAllowed("its RTTimeUSecMax is \(maxTimeMicroseconds)") }
        priority = min(wanted, maxPriority)
        let allowed = UInt64(maxTimeMicroseconds)
        if current.hard <= allowed {
            newTimeLimit = nil
        } else {
            let limit = min(Self.preferredTimeLimitMicroseconds, allowed)
            newTimeLimit = TimeLimit(soft: min(current.soft, limit), hard: limit)
        }
    }
}

/// Why rtkit did not make the thread realtime, as the log says it.
package enum RealtimeKitError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The system bus could not be reached (no bus, as in a container or a session without one): `errno`.
    case noSystemBus(errno: Int32)
    /// No rtkit on the bus (not installed, or the bus cannot start it).
    case notRunning
    /// rtkit said no (`AccessDenied`: polkit's answer, its limits per user, or an `RLIMIT_RTTIME` it does not accept).
    case refused(message: String)
    /// rtkit allows nothing (its limits).
    case nothingAllowed(String)
    /// `RLIMIT_RTTIME` could not be set: `errno`.
    case timeLimitNotSet(errno: Int32)
    /// Any other D-Bus error (its name and message), or a failed call without one (`errno`: a timeout, a lost bus).
    case failed(name: String, message: String)

    package var description: String {
        switch self {
        case .noSystemBus(let code): "no system bus (\(String(cString: strerror(code))))"
        case .notRunning: "rtkit is not running (package rtkit)"
        case .refused(let message): "rtkit refused (\(message))"
        case .nothingAllowed(let why): "rtkit allows nothing: \(why)"
        case .timeLimitNotSet(let code): "RLIMIT_RTTIME not set (\(String(cString: strerror(code))))"
        case .failed(let name, let message): "rtkit call failed (\(name): \(message))"
        }
    }
}
