import Foundation

/// The clock file devices pace themselves by: the monotonic time now, and a sleep until a deadline.
/// Tests pass a virtual clock so paced devices run without waiting in real time.
package struct PacingClock: Sendable {
    /// Monotonic nanoseconds, the time base of `AudioFrame.captureTimeNs`.
    package var now: @Sendable () -> UInt64
    /// Suspends until `now()` reaches the deadline (returns at once if it has passed); throws on cancellation.
    package var sleepUntil: @Sendable (_ deadlineNs: UInt64) async throws -> Void

    package init(now: @escaping @Sendable () -> UInt64, sleepUntil: @escaping @Sendable (UInt64) async throws -> Void) {
        self.now = now
        self.sleepUntil = sleepUntil
    }

    /// CLOCK_MONOTONIC and `Task.sleep`.
    package static let live = PacingClock(
        now: monotonicNanoseconds,
        sleepUntil: { deadline in
            let now = monotonicNanoseconds()
            if deadline > now { try await Task.sleep(nanoseconds: deadline - now) }
            try Task.checkCancellation()
        }
    )
}
