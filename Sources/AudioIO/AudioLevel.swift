import Foundation

/// A frame's loudness, measured one way for every stage that needs it: the echo stages, the barge-in guards and the
/// endpointer. Samples are 16-bit (full scale 32 767); an empty frame is silent.
package enum AudioLevel {
    /// The sum of the squared samples: energy over a stretch whose length the caller accounts for (ERLE).
    package static func sumOfSquares<C: Collection<Int16>>(_ samples: C) -> Double {
        samples.reduce(0.0) { $0 + Double($1) * Double($1) }
    }

    /// The mean of the squared samples: a frame's power, compared and averaged without a square root.
    package static func meanSquare<C: Collection<Int16>>(_ samples: C) -> Double {
        samples.isEmpty ? 0 : sumOfSquares(samples) / Double(samples.count)
    }

    /// The root mean square, in sample units (of 32 767).
    package static func rms<C: Collection<Int16>>(_ samples: C) -> Double {
        meanSquare(samples).squareRoot()
    }

    /// The loudest 20 ms frame's RMS in `samples` (a stretch of reference around a frame: how loud the echo may be).
    package static func loudestFrameRMS(_ samples: [Int16]) -> Double {
        stride(from: 0, to: samples.count, by: AudioFrame.samplesPerFrame).map { start in
            meanSquare(samples[start..<min(samples.count, start + AudioFrame.samplesPerFrame)])
        }.max().map { $0.squareRoot() } ?? 0
    }

    /// Level given to digital silence, below anything a microphone produces.
    package static let silenceDbfs = -100.0

    /// The RMS level in dBFS after removing the frame's mean, so a DC offset (a cheap sound card, a badly recorded
    /// file) does not read as sound: the endpointer's measure.
    package static func dbfsWithoutOffset(_ samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return silenceDbfs }
        let mean = samples.reduce(0.0) { $0 + Double($1) } / Double(samples.count)
        let energy = samples.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) }
        let rms = (energy / Double(samples.count)).squareRoot() / 32768
        guard rms > 0 else { return silenceDbfs }
        return max(silenceDbfs, 20 * log10(rms))
    }
}
