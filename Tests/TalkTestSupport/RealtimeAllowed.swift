import Glibc
import Threading

/// Whether a thread of this process can be made realtime at `priority`: asked on a scratch thread of the kernel
/// directly (root, CAP_SYS_NICE, RLIMIT_RTPRIO) and, where it refuses, of the system's rtkit (a desktop account's way),
/// so a test's expectation does not depend on how the threads under test ask.
package func realtimeAllowed(priority: Int32) async -> Bool {
    await withCheckedContinuation { done in
        NamedThread.start("rt-probe") {
            var parameters = sched_param(sched_priority: priority)
            if sched_setscheduler(0, SCHED_RR, &parameters) == 0 { return done.resume(returning: true) }
            done.resume(returning: (try? RealtimeKitClient().makeCallingThreadRealtime(priority: priority)) != nil)
        }
    }
}
