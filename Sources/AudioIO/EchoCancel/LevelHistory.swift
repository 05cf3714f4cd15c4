/// The running figures the echo stages keep over 100 ms windows (`ResidualEchoSuppressor`,
/// `DoubleTalkDetector`): a bounded list of the latest values, its mean and its percentiles.
enum LevelHistory {
    static func push(_ value: Double, into list: inout [Double], keep: Int) {
        list.append(value)
        if list.count > keep { list.removeFirst(list.count - keep) }
    }

    static func mean(_ list: [Double]) -> Double {
        list.isEmpty ? 0 : list.reduce(0, +) / Double(list.count)
    }

    /// The value a fraction `p` of the way up the sorted list; `values` must not be empty.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted[Int(Double(sorted.count - 1) * p)]
    }
}
