/// How long a realtime thread that does CPU-heavy work (the live decoder) has run since it last blocked, and when it
/// must block before it goes on: a value with no I/O (`ThreadSerialExecutor`'s bounded realtime thread reads the
/// clocks and sleeps).
///
/// Why a bound: a realtime thread that does not block holds its core from every normal thread of the desktop, and the
/// kernel counts its CPU time since it last blocked against `RLIMIT_RTTIME` (SIGXCPU at the soft limit, SIGKILL at the
/// hard one: rtkit grants realtime only to a process with one, 200 ms by default). Only a wake-up from a real sleep
/// starts the count again; being preempted by a higher realtime thread does not. A decoder that fell behind (after a
/// final pass in the normal class, or a start window handed over at once) would catch up without blocking for as long
/// as its backlog lasts.
///
/// The thread is looked at between pieces of work (each job, each decoder call): `cpu` is its CPU time so far,
/// `voluntarySwitches` how often it has blocked. A change in the count means it blocked since the last look, so its
/// current stretch began no earlier than that look's CPU time: the stretch counted is never shorter than the real one.
package struct RealtimeBurst: Equatable, Sendable {
    /// The longest stretch, in ns, a bounded realtime thread runs before it sleeps, where the process's
    /// `RLIMIT_RTTIME` allows that much (`budget(timeLimitMicroseconds:)`): a quarter of rtkit's default 200 ms, so the
    /// longest piece of work done between two looks (a decoder call on one frame or a partial, a few ms and at most
    /// tens) fits under the limit after it with room to spare; long enough that the pause (`pauseNanoseconds`) costs
    /// 2 % of a catching-up decoder's time.
    package static let defaultBudgetNanoseconds: UInt64 = 50_000_000

    /// How long the thread sleeps once its stretch reaches the budget, in ns: 1 ms, a real sleep (the kernel restarts
    /// its `RLIMIT_RTTIME` count only on a wake-up; a sleep under the timer's reach may return without blocking), which
    /// also lets the normal threads of the core run.
    package static let pauseNanoseconds: UInt64 = 1_000_000

    /// The budget under a process `RLIMIT_RTTIME` of `timeLimitMicroseconds` (`UInt64.max`: none): the default, or a
    /// quarter of a lower limit (rtkit may allow less than 200 ms).
    package static func budget(timeLimitMicroseconds: UInt64) -> UInt64 {
        guard timeLimitMicroseconds < UInt64.max / 1000 else { return defaultBudgetNanoseconds }
        return min(defaultBudgetNanoseconds, timeLimitMicroseconds * 1000 / 4)
    }

    package let budgetNanoseconds: UInt64
    /// The CPU time where the current stretch began (at the latest), and at the last look.
    private var stretchStart: UInt64
    private var lastCPU: UInt64
    private var switches: Int
    /// The longest stretch counted so far, in ns (an upper bound of the thread's longest run without blocking).
    package private(set) var longestNanoseconds: UInt64 = 0

    /// A thread with `cpu` ns used and `voluntarySwitches` blocks so far, its stretch starting now.
    package init(budgetNanoseconds: UInt64, cpu: UInt64, voluntarySwitches: Int) {
        self.budgetNanoseconds = budgetNanoseconds
        stretchStart = cpu
        lastCPU = cpu
        switches = voluntarySwitches
    }

    /// A look at the thread between two pieces of work. True: it has run `budgetNanoseconds` or more without blocking,
    /// and sleeps (`pauseNanoseconds`) before the next piece.
    package mutating func mustPause(cpu: UInt64, voluntarySwitches: Int) -> Bool {
        if voluntarySwitches != switches {
            switches = voluntarySwitches
            stretchStart = lastCPU
        }
        lastCPU = max(lastCPU, cpu)
        let stretch = lastCPU - stretchStart
        longestNanoseconds = max(longestNanoseconds, stretch)
        return stretch >= budgetNanoseconds
    }
}
