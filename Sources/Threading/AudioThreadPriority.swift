#if canImport(Glibc)
import Glibc
#endif

/// The scheduling of the threads that keep audio on time: the sound server's client loops (capture and playback) and
/// the echo canceller. Each does well under a millisecond of work every 10 to 20 ms, but in the normal class it waits
/// for its turn behind every busy thread of the desktop (a compiler, a browser): playback then runs dry (a gap the echo
/// canceller loses seconds of reduction to) and capture reaches the canceller late. Round-robin realtime puts these
/// threads ahead of the normal class, as PulseAudio and PipeWire do for their own I/O threads. CPU-heavy work
/// (decoding, synthesis) never runs at this class: a realtime thread that does not block holds its core.
package enum AudioThreadPriority {
    /// The round-robin priority asked for (1-99): under the sound server's own I/O threads (PulseAudio runs its at 5,
    /// PipeWire's data loop at 20 or more), so the server is never kept from the device by its clients.
    package static let realtimePriority: Int32 = 3

    /// Linux's `SCHED_RESET_ON_FORK` (sched.h): a child forked from the thread starts in the normal class.
    static let resetOnFork: Int32 = 0x4000_0000

    package enum Outcome: Equatable, Sendable {
        /// The thread now runs round-robin realtime at `realtimePriority`.
        case realtime
        /// The system did not allow it (no `CAP_SYS_NICE` and `RLIMIT_RTPRIO` under the priority, or realtime
        /// throttled for the group); the thread stays in the normal class. `errno` says why.
        case refused(errno: Int32)
    }

    /// Moves the calling thread to round-robin realtime at `realtimePriority`, where the kernel allows this process
    /// to (root, `CAP_SYS_NICE`, or an `RLIMIT_RTPRIO` of at least the priority: the audio group's limits on many
    /// distributions, or `LimitRTPRIO=` in the unit). Otherwise it stays as it was, and says so.
    package static func raiseCallingThread() -> Outcome {
        var parameters = sched_param(sched_priority: realtimePriority)
        let result = sched_setscheduler(0, SCHED_RR | resetOnFork, &parameters)
        return result == 0 ? .realtime : .refused(errno: errno)
    }

    /// Whether the calling thread runs round-robin realtime (for a test or a status line).
    package static var callingThreadIsRealtime: Bool {
        (sched_getscheduler(0) & ~resetOnFork) == SCHED_RR
    }
}
