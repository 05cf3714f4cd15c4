import Foundation

/// Loudness of a frame as the endpointer sees it.
package enum SignalLevel {
    /// Level given to digital silence, below anything a microphone produces.
    package static let silenceDbfs = -100.0

    /// RMS level in dBFS after removing the frame's mean, so a DC offset (a cheap sound card, a badly
    /// recorded file) does not read as sound.
    package static func dbfs(_ samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return silenceDbfs }
        var sum = 0.0
        for s in samples { sum += Double(s) }
        let mean = sum / Double(samples.count)
        var energy = 0.0
        for s in samples {
            let d = Double(s) - mean
            energy += d * d
        }
        let rms = (energy / Double(samples.count)).squareRoot() / 32768
        guard rms > 0 else { return silenceDbfs }
        return max(silenceDbfs, 20 * log10(rms))
    }
}
