/// The normalised cross-correlation of the newest `window` capture samples with the reference at one lag after
/// another (`EchoAligner`'s sample-exact lag): capture[i] was heard `lag` samples after reference[start + i], both
/// buffers ending together in time. At a negative lag (the echo before its reference) the newest `-lag` samples of
/// capture have no reference yet: the older ones are compared, down to half the window.
///
/// Every sum is of products of two 16-bit samples (each under 2^31 in size), at most `window` of them, so it is an
/// integer under 2^53 for any window under 2^22 samples: kept in Int64 it is the exact value a sum in Double gives
/// too (Double holds every such partial sum exactly, in any order). The energies come from prefix sums, so each
/// lag costs one pass of multiply-adds, not three; a search over the aligner's 801 lags runs on the capture actor.
struct SampleMatch {
    private let reference: [Int16]
    private let capture: [Int16]
    private let window: Int
    /// referenceSquares[k]: the sum of the first k reference samples squared; likewise captureSquares.
    private let referenceSquares: [Int64]
    private let captureSquares: [Int64]

    /// nil until `capture` holds exactly `window` samples.
    init?(reference: [Int16], capture: [Int16], window: Int) {
        guard capture.count == window, window < 1 << 22 else { return nil }
        (self.reference, self.capture, self.window) = (reference, capture, window)
        referenceSquares = Self.prefixSquares(reference)
        captureSquares = Self.prefixSquares(capture)
    }

    /// The correlation at `lag` samples; nil where fewer than half the window overlap or either side is silent.
    func correlation(atSamples lag: Int) -> Double? {
        let n = window
        let start = reference.count - n - lag
        let count = min(n, n + lag)
        guard start >= 0, count >= n / 2, start + count <= reference.count else { return nil }
        let energy = referenceSquares[start + count] - referenceSquares[start]
        let captured = captureSquares[count]
        guard energy > 0, captured > 0 else { return nil }
        let dot = reference.withUnsafeBufferPointer { r in
            capture.withUnsafeBufferPointer { c in
                let (r, c) = (r.baseAddress! + start, c.baseAddress!)
                var dot: Int64 = 0
                for i in 0..<count { dot &+= Int64(Int32(r[i]) &* Int32(c[i])) }
                return dot
            }
        }
        return Double(dot) / (Double(energy) * Double(captured)).squareRoot()
    }

    private static func prefixSquares(_ samples: [Int16]) -> [Int64] {
        var sums = [Int64](repeating: 0, count: samples.count + 1)
        samples.withUnsafeBufferPointer { s in
            for i in 0..<s.count { sums[i + 1] = sums[i] &+ Int64(Int32(s[i]) &* Int32(s[i])) }
        }
        return sums
    }
}
