import Foundation

/// This process's CPU time and peak memory, as the kernel counts them (children not included).
package struct ResourceUsage: Sendable, Equatable {
    /// User plus system CPU seconds.
    package var cpuSeconds: Double
    /// Peak resident set size in MiB.
    package var peakRSSMegabytes: Double

    package static func current() -> ResourceUsage {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return ResourceUsage(cpuSeconds: cpu, peakRSSMegabytes: Double(usage.ru_maxrss) / 1024)  // ru_maxrss is in KiB on Linux
    }
}
