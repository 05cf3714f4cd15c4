/// The figures every benchmark reports, computed one way.
package enum BenchStatistics {
    /// The value a fraction `p` of the way up the sorted values, by nearest rank (rounded); nil for no values: a
    /// figure that was not measured is never reported as a number (NaN or 0).
    package static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }
}
