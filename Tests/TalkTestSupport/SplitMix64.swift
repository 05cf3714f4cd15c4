/// A small deterministic generator, so noise and fuzz cases are the same on every run and a failing case can
/// be replayed from its seed.
package struct SplitMix64: RandomNumberGenerator {
    package var state: UInt64

    package init(state: UInt64) { self.state = state }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in [-1, 1], for noise samples.
    package mutating func signedUnit() -> Double { Double(next()) / Double(UInt64.max) * 2 - 1 }

    /// A uniform value in [0, 1).
    package mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
