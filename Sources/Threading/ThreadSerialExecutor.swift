import Foundation
import Synchronization

/// A `SerialExecutor` that runs the jobs given to it, in order, on one thread of its own, outside the cooperative pool.
/// An actor whose isolated code makes long synchronous C calls names it as its `unownedExecutor`
/// (`PocketSphinxRecognizer`: its decoder takes milliseconds a frame and tens to hundreds for a final pass), so that
/// code never holds one of the pool's threads (one per core: two here), which the echo canceller, the session, the
/// microphone gate and the sockets' async side need meanwhile. The thread carries `name` (it shows in
/// `/proc/<pid>/task/*/comm`) and ends once the executor is released and the jobs it was given have run.
package final class ThreadSerialExecutor: SerialExecutor {
    /// Fires when the thread has ended. It holds no reference to the executor: keep it to see a released owner's thread go.
    package let end = End()
    private let jobs = JobQueue()

    /// The realtime side of a thread started with `BoundedRealtime`; nil for the others.
    private let bounded: BoundedRealtimeThread?

    /// Starts the thread. `name` is what the system lists for it (`ThreadName`); `prepare` runs on the thread first
    /// (`AudioThreadPriority.raiseCallingThread` for a thread that must keep time).
    package convenience init(name: String, prepare: @escaping @Sendable () -> Void = {}) {
        self.init(name: name, bounded: nil, prepare: prepare)
    }

    /// Starts a thread that asks for realtime as `realtime` says, for CPU-heavy work that must keep up with the
    /// microphone: where it gets it, the thread sleeps briefly once it has run `RealtimeBurst`'s budget without
    /// blocking (checked before each job and at each `checkRealtimeBurst()`), and `outsideRealtime` runs the calls that
    /// can take long in the normal class.
    package convenience init(name: String, realtime: BoundedRealtime) {
        self.init(name: name, bounded: BoundedRealtimeThread(realtime), prepare: {})
    }

    private init(name: String, bounded: BoundedRealtimeThread?, prepare: @escaping @Sendable () -> Void) {
        self.bounded = bounded
        let jobs = jobs
        let end = end
        NamedThread.start(name) {
            prepare()
            bounded?.start()
            jobs.serve { bounded?.checkpoint() }
            bounded?.finish()
            end.fire()
        }
    }

    /// Whether the thread got realtime as its `BoundedRealtime` asked (false for a thread started without).
    package var runsRealtime: Bool { bounded?.isRealtime ?? false }

    /// The longest the thread has run realtime without blocking, as counted between pieces of work (an upper bound);
    /// nil where it is not realtime.
    package var longestRealtimeBurst: Duration? { bounded?.longestBurst }

    /// On the executor's thread, between two pieces of work within a job (a decoder call per frame): sleeps briefly once
    /// a realtime thread has run its budget without blocking (`RealtimeBurst`). Nothing for a normal thread.
    package func checkRealtimeBurst() {
        bounded?.checkpoint()
    }

    /// On the executor's thread: runs `body`, a call that can take long (a decoder's final pass), in the normal class on
    /// the companion thread while this thread waits, where this thread is realtime; in place otherwise.
    package func outsideRealtime<T>(_ body: () throws -> T) throws -> T {
        guard let bounded else { return try body() }
        return try bounded.outsideRealtime(body)
    }

    deinit {
        // Queued jobs hold the executor, so none is left: the thread finds the queue closed and empty and returns.
        jobs.close()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        jobs.push(UnownedJob(job), executor: self)
    }

    package func checkIsolated() {
        // A call handed to the companion (`outsideRealtime`) runs while the executor's thread waits for it: it holds the
        // isolation (an isolated closure inside it, as `map`'s, is checked here).
        precondition(jobs.isServingThread || bounded?.callingThreadRunsHandedOverCall == true, "not on the executor's own thread")
    }

    /// The jobs waiting for the thread. Each holds its executor until it has run, so the executor (and the actor's
    /// identity the runtime keeps for the job) outlives it.
    private final class JobQueue: @unchecked Sendable {
        private let condition = NSCondition()
        private var waiting: [(job: UnownedJob, executor: ThreadSerialExecutor)] = []
        private var closed = false
        private var thread: pthread_t?

        func push(_ job: UnownedJob, executor: ThreadSerialExecutor) {
            condition.lock()
            waiting.append((job, executor))
            condition.signal()
            condition.unlock()
        }

        func close() {
            condition.lock()
            closed = true
            condition.signal()
            condition.unlock()
        }

        var isServingThread: Bool {
            condition.lock()
            defer { condition.unlock() }
            return thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        }

        /// The thread's loop: runs each job as it comes (`beforeEach` first), returns once closed with nothing waiting.
        func serve(beforeEach: () -> Void) {
            condition.lock()
            thread = pthread_self()
            condition.unlock()
            while true {
                condition.lock()
                while waiting.isEmpty && !closed { condition.wait() }
                if waiting.isEmpty {
                    condition.unlock()
                    return
                }
                let (job, executor) = waiting.removeFirst()
                condition.unlock()
                beforeEach()
                // Held until the job has run; released outside the lock, so the last job of a released owner may
                // take the executor with it (its deinit closes the queue).
                withExtendedLifetime(executor) { job.runSynchronously(on: executor.asUnownedSerialExecutor()) }
            }
        }
    }

    /// The thread's end, as an event to wait for.
    package final class End: Sendable {
        private let state = Mutex(State())

        private struct State {
            var ended = false
            var waiters: [CheckedContinuation<Void, Never>] = []
        }

        /// Returns once the thread has ended (at once if it has).
        package func wait() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ended = state.withLock { state in
                    if !state.ended { state.waiters.append(continuation) }
                    return state.ended
                }
                if ended { continuation.resume() }
            }
        }

        package var hasEnded: Bool { state.withLock { $0.ended } }

        fileprivate func fire() {
            let waiters = state.withLock { state in
                state.ended = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }
}
