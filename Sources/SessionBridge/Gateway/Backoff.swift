/// The reconnect schedule: 0.5 s doubling to 30 s, with jitter, never earlier than the Gateway asked.
package struct Backoff: Sendable, Equatable {
    package var initial: Double = 0.5
    package var maximum: Double = 30
    /// Fraction of the delay that is randomised (0.2 means the delay lands in [0.8, 1.0] of nominal).
    package var jitter: Double = 0.2

    package init(initial: Double = 0.5, maximum: Double = 30, jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The nominal delay before reconnect attempt `attempt` (1-based), without jitter.
    package static func nominal(attempt: Int, initial: Double, maximum: Double) -> Double {
        let exponent = Double(min(max(attempt - 1, 0), 30))
        return min(maximum, initial * pow2(exponent))
    }

    /// The delay before attempt `attempt`: nominal minus up to `jitter` of it (`unit` in [0, 1) picks how much),
    /// and at least `notBefore` seconds when the Gateway asked for that (retryAfterMs, restartExpectedMs).
    package func delay(attempt: Int, unit: Double, notBefore: Double? = nil) -> Double {
        let nominal = Self.nominal(attempt: attempt, initial: initial, maximum: maximum)
        let jittered = nominal * (1 - jitter * min(max(unit, 0), 1))
        guard let floor = notBefore else { return jittered }
        return max(jittered, min(floor, 300))
    }

    private static func pow2(_ e: Double) -> Double {
        var v = 1.0
        for _ in 0..<Int(e) { v *= 2 }
        return v
    }
}
