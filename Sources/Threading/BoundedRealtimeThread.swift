import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What a `ThreadSerialExecutor` asks for a thread that does CPU-heavy work which must keep up with the microphone
/// (the live session's decoder): round-robin realtime at `priority`, through the same route as the audio threads
/// (`AudioThreadPriority`: the kernel, else rtkit), with its runs bounded (`RealtimeBurst`) and its long calls
/// (`ThreadSerialExecutor.outsideRealtime`) on a companion thread in the normal class, `longCallThreadName`.
package struct BoundedRealtime: Sendable {
    package var priority: Int32
    package var longCallThreadName: String
    /// Told, on the thread, how asking for realtime came out (for the log).
    package var report: @Sendable (AudioThreadPriority.Outcome) -> Void

    package init(priority: Int32, longCallThreadName: String, report: @escaping @Sendable (AudioThreadPriority.Outcome) -> Void = { _ in }) {
        self.priority = priority
        self.longCallThreadName = longCallThreadName
        self.report = report
    }
}

/// The scheduling side of a bounded realtime executor thread. `start`, `checkpoint` and `outsideRealtime` run only on
/// the executor's own thread; the figures are readable from any.
final class BoundedRealtimeThread: Sendable {
    let settings: BoundedRealtime
    private let longCalls: LongCallThread
    /// The thread's stretch since it last blocked; nil while it is not realtime. Only its own thread touches it.
    private let burst = Mutex<RealtimeBurst?>(nil)
    private let realtime = Atomic<Bool>(false)
    private let longestNanoseconds = Atomic<UInt64>(0)

    /// Starts the companion thread from the calling (normal-class) thread, so it never inherits realtime.
    init(_ settings: BoundedRealtime) {
        self.settings = settings
        longCalls = LongCallThread(name: settings.longCallThreadName)
    }

    var isRealtime: Bool { realtime.load(ordering: .relaxed) }
    var longestBurst: Duration? {
        isRealtime ? .nanoseconds(Int64(clamping: longestNanoseconds.load(ordering: .relaxed))) : nil
    }

    /// On the executor's thread as it starts: asks for realtime, and bounds the thread's runs if it got it.
    func start() {
        let outcome = AudioThreadPriority.raiseCallingThread(priority: settings.priority)
        if case .realtime = outcome {
            let budget = RealtimeBurst.budget(timeLimitMicroseconds: RealtimeKitClient.currentTimeLimit().soft)
            burst.withLock { $0 = RealtimeBurst(budgetNanoseconds: budget, cpu: Self.cpuNanoseconds(), voluntarySwitches: Self.voluntarySwitches()) }
            realtime.store(true, ordering: .relaxed)
        }
        settings.report(outcome)
    }

    /// Between two pieces of work on the executor's thread: sleeps once the thread has run its budget without blocking.
    func checkpoint() {
        guard isRealtime else { return }
        let (pause, longest) = burst.withLock { burst -> (Bool, UInt64) in
            guard burst != nil else { return (false, 0) }
            let pause = burst!.mustPause(cpu: Self.cpuNanoseconds(), voluntarySwitches: Self.voluntarySwitches())
            return (pause, burst!.longestNanoseconds)
        }
        longestNanoseconds.store(longest, ordering: .relaxed)
        if pause {
            var pauseTime = timespec(tv_sec: 0, tv_nsec: Int(RealtimeBurst.pauseNanoseconds))
            _ = nanosleep(&pauseTime, nil)
        }
    }

    /// Runs `body` on the companion thread in the normal class while the executor's thread waits for it (a block: its
    /// `RLIMIT_RTTIME` count starts again), or in place where the thread is not realtime.
    func outsideRealtime<T>(_ body: () throws -> T) throws -> T {
        guard isRealtime else { return try body() }
        checkpoint()
        return try withoutActuallyEscaping(body) { body in
            // The executor's thread waits until `body` has run, so nothing else runs the executor's work meanwhile: the
            // call stays serial, as if made in place.
            let call = HandedOverCall(body)
            longCalls.run { call.run() }
            return try call.result!.get()
        }
    }

    /// Whether the calling thread is the companion running a call handed over by the executor's thread, which waits
    /// meanwhile: the call holds the executor's isolation (`ThreadSerialExecutor.checkIsolated`).
    var callingThreadRunsHandedOverCall: Bool { longCalls.callingThreadRunsCall }

    /// On the executor's thread once it has served its last job: ends the companion thread and waits for it.
    func finish() {
        longCalls.close()
    }

    static func cpuNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// How often the calling thread has blocked (`getrusage(RUSAGE_THREAD)`'s voluntary context switches).
    static func voluntarySwitches() -> Int {
        var usage = rusage()
        guard getrusage(rusageThread, &usage) == 0 else { return 0 }
        return usage.ru_nvcsw
    }

    /// Linux's `RUSAGE_THREAD` (sys/resource.h declares it only under _GNU_SOURCE, so Swift does not import it).
    static let rusageThread = __rusage_who_t(1)
}

/// One call handed to the companion thread, with its result; the handing thread waits for it. The body is let go once
/// it has run, before the handing thread goes on (it must not outlive `withoutActuallyEscaping`).
private final class HandedOverCall<T>: @unchecked Sendable {
    private var body: (() throws -> T)?
    var result: Result<T, any Error>?

    init(_ body: @escaping () throws -> T) { self.body = body }

    func run() {
        guard let body else { return }
        self.body = nil
        result = Result { try body() }
    }
}

/// A normal-class thread that runs one handed-over call at a time for its executor's thread.
private final class LongCallThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var work: (@Sendable () -> Void)?
    private var closed = false
    private let ended = DispatchSemaphore(value: 0)
    /// The companion's thread while it runs a call (nil between calls).
    private var runningOn: pthread_t?

    init(name: String) {
        // Started from the executor's creator, before the executor's thread asks for realtime: it keeps the creator's
        // class (the normal one), and realtime threads start none (SCHED_RESET_ON_FORK).
        NamedThread.start(name) { [self] in
            serve()
            ended.signal()
        }
    }

    /// Runs `call` on this thread and returns once it has.
    func run(_ call: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        condition.lock()
        work = {
            call()
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
    }

    var callingThreadRunsCall: Bool {
        condition.lock()
        defer { condition.unlock() }
        return runningOn.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    func close() {
        condition.lock()
        closed = true
        condition.signal()
        condition.unlock()
        ended.wait()
    }

    private func serve() {
        while true {
            condition.lock()
            while work == nil && !closed { condition.wait() }
            let next = work
            work = nil
            if next != nil { runningOn = pthread_self() }
            condition.unlock()
            guard let next else { return }
            next()
            condition.lock()
            runningOn = nil
            condition.unlock()
        }
    }
}
