import Foundation

/// How closely a captured or converted signal holds a known clip, wherever in it the clip lies.
enum SignalMatch {
    /// The highest normalised correlation (1 = the same waveform, up to gain) of `clip` against `signal`
    /// over every offset of the clip inside the signal, and that offset in samples. A coarse search on
    /// 10 ms energy envelopes finds the offset; the waveforms are then compared around it sample by sample.
    static func best(_ clip: [Int16], in signal: [Int16]) -> (correlation: Double, offset: Int) {
        let block = 160
        let clipEnvelope = envelope(clip, block: block)
        let signalEnvelope = envelope(signal, block: block)
        var coarse = 0
        var coarseScore = -Double.infinity
        for lag in 0...max(0, signalEnvelope.count - clipEnvelope.count) {
            let score = pearson(clipEnvelope, Array(signalEnvelope.dropFirst(lag).prefix(clipEnvelope.count)))
            if score > coarseScore { (coarse, coarseScore) = (lag, score) }
        }
        var best = (correlation: -1.0, offset: 0)
        for offset in max(0, coarse * block - block)...(coarse * block + block) {
            let r = normalised(clip, Array(signal.dropFirst(offset).prefix(clip.count)))
            if r > best.correlation { best = (r, offset) }
        }
        return best
    }

    private static func envelope(_ s: [Int16], block: Int) -> [Double] {
        stride(from: 0, to: s.count, by: block).map { start in
            let part = s[start..<min(start + block, s.count)]
            return part.reduce(0.0) { $0 + abs(Double($1)) } / Double(part.count)
        }
    }

    private static func pearson(_ a: [Double], _ b: [Double]) -> Double {
        let n = min(a.count, b.count)
        guard n > 1 else { return -1 }
        let ma = a.prefix(n).reduce(0, +) / Double(n), mb = b.prefix(n).reduce(0, +) / Double(n)
        var ab = 0.0, aa = 0.0, bb = 0.0
        for i in 0..<n {
            ab += (a[i] - ma) * (b[i] - mb)
            aa += (a[i] - ma) * (a[i] - ma)
            bb += (b[i] - mb) * (b[i] - mb)
        }
        return aa > 0 && bb > 0 ? ab / (aa * bb).squareRoot() : -1
    }

    /// Correlation of the overlapping part; a part of `b` missing at the end counts as silence.
    private static func normalised(_ a: [Int16], _ b: [Int16]) -> Double {
        var ab = 0.0, aa = 0.0, bb = 0.0
        for i in 0..<a.count {
            let x = Double(a[i]), y = i < b.count ? Double(b[i]) : 0
            ab += x * y
            aa += x * x
            bb += y * y
        }
        return aa > 0 && bb > 0 ? ab / (aa * bb).squareRoot() : 0
    }
}
