import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The scheduling of the threads that keep audio on time: the sound server's client loops (capture and playback) and
/// the echo canceller. Each does well under a millisecond of work every 10 to 20 ms, but in the normal class it waits
/// for its turn behind every busy thread of the desktop (a compiler, a browser): playback then runs dry (a gap the echo
/// canceller loses seconds of reduction to) and capture reaches the canceller late. Round-robin realtime puts these
/// threads ahead of the normal class, as PulseAudio and PipeWire do for their own I/O threads. CPU-heavy work
/// (synthesis, file decodes) never runs at this class: a realtime thread that does not block holds its core; the live
/// session's decoder alone runs realtime, under the audio threads and bounded (`BoundedRealtime`). A desktop
/// user's account may not ask the kernel for it; there rtkit grants it, as it does the sound server's own threads.
package enum AudioThreadPriority {
    /// The round-robin priority asked for (1-99): under the sound server's own I/O threads (PulseAudio runs its at 5,
    /// PipeWire's data loop at 20 or more), so the server is never kept from the device by its clients.
    package static let realtimePriority: Int32 = 3

    /// Linux's `SCHED_RESET_ON_FORK` (sched.h): a child forked from the thread starts in the normal class.
    static let resetOnFork: Int32 = 0x4000_0000

    /// How a thread got realtime.
    package enum Route: Hashable, Sendable {
        /// The kernel allowed the process itself (root, `CAP_SYS_NICE`, `RLIMIT_RTPRIO`).
        case kernel
        /// rtkit did it for the process (`RealtimeKitClient`): the desktop user's way.
        case realtimeKit
    }

    package enum Outcome: Hashable, Sendable, CustomStringConvertible {
        /// The thread now runs round-robin realtime at `priority` (under `realtimePriority` where rtkit allows less).
        case realtime(priority: Int32, through: Route)
        /// Neither the kernel nor rtkit allowed it; the thread stays in the normal class. `kernel` is the kernel's
        /// `errno` (EPERM: no `CAP_SYS_NICE` and `RLIMIT_RTPRIO` under the priority), `realtimeKit` why rtkit did
        /// not (nil: not asked, as the kernel's refusal was not one of permission).
        case refused(kernel: Int32, realtimeKit: RealtimeKitError?)

        /// What the log says, once (`isFirstReport(of:)`).
        package var description: String {
            switch self {
            case .realtime(let priority, .kernel): "realtime (SCHED_RR \(priority))"
            case .realtime(let priority, .realtimeKit): "realtime through rtkit (SCHED_RR \(priority))"
            case .refused(let kernel, let kit):
                "realtime not allowed (\(String(cString: strerror(kernel))))" + (kit.map { "; \($0)" } ?? "")
            }
        }
    }

    /// Moves the calling thread to round-robin realtime at `realtimePriority`, where the kernel allows this process
    /// to (root, `CAP_SYS_NICE`, or an `RLIMIT_RTPRIO` of at least the priority: the audio group's limits on many
    /// distributions, or `LimitRTPRIO=` in the unit); refused for lack of permission, it asks rtkit (`realtimeKit`),
    /// which blocks the calling thread for a D-Bus round trip: call it on the audio thread itself, as it starts, never
    /// on the cooperative pool. Otherwise the thread stays as it was, and the outcome says why.
    /// `priority`: the audio threads' `realtimePriority` unless said (the live decoder asks for less: `BoundedRealtime`).
    package static func raiseCallingThread(
        priority: Int32 = realtimePriority, realtimeKit: RealtimeKitClient = RealtimeKitClient()
    ) -> Outcome {
        var parameters = sched_param(sched_priority: priority)
        guard sched_setscheduler(0, SCHED_RR | resetOnFork, &parameters) != 0 else {
            return .realtime(priority: priority, through: .kernel)
        }
        let kernel = errno
        guard kernel == EPERM else { return .refused(kernel: kernel, realtimeKit: nil) }
        do {
            let granted = try realtimeKit.makeCallingThreadRealtime(priority: priority)
            return .realtime(priority: granted, through: .realtimeKit)
        } catch {
            return .refused(kernel: kernel, realtimeKit: error)
        }
    }

    /// True the first time the process sees `outcome`: each audio thread asks as it starts (and again after a device
    /// restart), but the log says each outcome once, at info; later ones at debug.
    package static func isFirstReport(of outcome: Outcome) -> Bool {
        reported.withLock { $0.insert(outcome).inserted }
    }

    private static let reported = Mutex<Set<Outcome>>([])

    /// Whether the calling thread runs round-robin realtime (for a test or a status line).
    package static var callingThreadIsRealtime: Bool {
        (sched_getscheduler(0) & ~resetOnFork) == SCHED_RR
    }
}
