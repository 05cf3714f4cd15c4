/// The reconnect schedule, in two parts, both with jitter so many clients do not ask in step.
///
/// A Gateway that did not answer (nothing listening, unreachable, an upgrade refused by the proxy in front of
/// it) is probed: asking again costs it nothing, and a user waits for every second between its return and
/// the next attempt. Every `quickProbe` seconds for the first `quickWindow` seconds of an outage (a restart,
/// a dropped Wi-Fi), then about every `probeCeiling` seconds for as long as it lasts: a Gateway that comes back
/// is found within `probeCeiling` seconds plus one connect, whatever the outage (the target is 2 s). While it
/// stays down that is one refused connect every 1-1.5 s, which never reaches the Gateway's code.
///
/// A Gateway that answered and refused, or accepted and dropped the socket within `stableSeconds`, backs off:
/// `initial` doubling to `maximum`, never earlier than it asked (retryAfterMs, restartExpectedMs).
package struct Backoff: Sendable, Equatable {
    package var initial: Double = 0.5
    package var maximum: Double = 30
    /// Fraction of the delay that is randomised (0.2 means the delay lands in [0.8, 1.0] of nominal).
    package var jitter: Double = 0.2
    /// Seconds between probes early in an outage: a restarting Gateway listens again within a second or two.
    package var quickProbe: Double = 0.25
    /// Seconds from the start of an outage during which probes are quick.
    package var quickWindow: Double = 3
    /// The longest wait between probes after the quick window; with `probeJitter` they come every
    /// 1.0-1.5 s, under the 2 s in which a returning Gateway must be found.
    package var probeCeiling: Double = 1.5
    /// Fraction of a late probe's wait that is randomised.
    package var probeJitter: Double = 1.0 / 3
    /// A connection that lasted this long was a good one: losing it starts a new outage at quick probes.
    /// Shorter, it counts as a failure of the Gateway's (it accepts and drops us), which backs off.
    package var stableSeconds: Double = 10

    package init(initial: Double = 0.5, maximum: Double = 30, jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
    }

    /// A schedule whose probes are as slow as its back-off (tests that must see a long wait).
    package static func withoutProbes(initial: Double, maximum: Double) -> Backoff {
        var b = Backoff(initial: initial, maximum: maximum)
        b.quickProbe = initial
        b.quickWindow = 0
        b.probeCeiling = initial
        b.probeJitter = 0
        return b
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

    /// The wait before the next probe of a Gateway that has not answered for `outageSeconds`.
    package func probeDelay(outageSeconds: Double, unit: Double, notBefore: Double? = nil) -> Double {
        let u = min(max(unit, 0), 1)
        let wait = outageSeconds < quickWindow
            ? quickProbe * (1 - jitter * u)
            : probeCeiling * (1 - probeJitter * u)
        guard let floor = notBefore else { return wait }
        return max(wait, min(floor, 300))
    }

    private static func pow2(_ e: Double) -> Double {
        var v = 1.0
        for _ in 0..<Int(e) { v *= 2 }
        return v
    }
}
