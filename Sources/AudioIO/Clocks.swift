import Foundation

/// Monotonic clock reading in nanoseconds, the time base of `AudioFrame.captureTimeNs`.
package func monotonicNanoseconds() -> UInt64 { clockNanoseconds(CLOCK_MONOTONIC) }

/// CPU time of the calling thread, in nanoseconds: what a synchronous piece of work (an Opus frame, a decoder
/// call) cost, whatever other threads of the process did meanwhile.
package func threadCPUNanoseconds() -> UInt64 { clockNanoseconds(CLOCK_THREAD_CPUTIME_ID) }

/// CPU time of the whole process (all threads, user and system), in seconds.
package func processCPUSeconds() -> Double { Double(clockNanoseconds(CLOCK_PROCESS_CPUTIME_ID)) / 1e9 }

private func clockNanoseconds(_ clock: clockid_t) -> UInt64 {
    var ts = timespec()
    clock_gettime(clock, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
