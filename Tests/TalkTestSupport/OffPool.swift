import Foundation

/// Runs blocking work (starting a child process, waiting for it, a long computation) on a thread of its own,
/// so it never holds one of the few cooperative threads (one per core) the other suites' async code needs.
package func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in
        let thread = Thread { c.resume(with: Result { try body() }) }
        thread.start()
    }
}

/// A task executor on a thread outside the cooperative pool, for CPU-heavy test bodies (Opus round trips,
/// resampling in a debug build): run them with `computeOffPool { ... }` below. Unlike the closure form above,
/// the body stays in the test's task, so `#expect` still reports to the running test.
package final class OffPoolExecutor: TaskExecutor {
    /// A serial queue of its own: one executor per body, so bodies of tests running in parallel do too.
    private let queue = DispatchQueue(label: "openclaw-talk.tests.off-pool")

    package init() {}

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// Runs `body` (synchronous, CPU-heavy) off the cooperative pool, inside the calling test's task.
package func computeOffPool<T>(_ body: () throws -> T) async throws -> T {
    try await withTaskExecutorPreference(OffPoolExecutor()) {
        try body()
    }
}
