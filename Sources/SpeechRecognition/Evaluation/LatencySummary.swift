/// Median, 95th percentile and maximum of a set of latencies in milliseconds (nearest-rank percentiles).
package struct LatencySummary: Sendable, Equatable, Codable {
    package var p50: Double
    package var p95: Double
    package var max: Double

    package init(p50: Double, p95: Double, max: Double) {
        self.p50 = p50
        self.p95 = p95
        self.max = max
    }

    /// All zero for an empty set (no utterance was found).
    package init(_ values: [Double]) {
        let sorted = values.sorted()
        func rank(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = Int((p * Double(sorted.count)).rounded(.up)) - 1
            return sorted[Swift.max(0, Swift.min(sorted.count - 1, index))]
        }
        self.init(p50: rank(0.5), p95: rank(0.95), max: sorted.last ?? 0)
    }
}
