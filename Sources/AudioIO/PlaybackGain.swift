/// The level a speaker plays at, changed between the samples it hands out: the Talk loop lowers a reply while
/// the user may be cutting in (less echo under their words), then raises it again. A change ramps over a few
/// milliseconds, as a step in the middle of a waveform is heard as a click, and the echo reference must follow
/// the same ramp to the sample, or the canceller takes the level change for a change of the echo path.
package struct PlaybackGain: Sendable, Equatable {
    /// The gain asked for; the next samples handed out ramp to it.
    package var target: Float = 1
    /// The gain the last sample handed out had.
    package private(set) var current: Float = 1

    /// 5 ms: short enough that a lowering takes hold at once, long enough to be inaudible as a step.
    package static let rampSeconds = 0.005

    package init() {}

    /// Nothing to scale: the samples go out as given.
    package var isUnity: Bool { current == 1 && target == 1 }

    /// Starts a new sound at the target level (no ramp: nothing played just before it in this sound).
    package mutating func startSound() { current = target }

    /// The next `samples` as they are heard, ramping from the current gain to the target over the first
    /// `rampSeconds` (or all of them, if fewer); `ramp` is what `scaled` needs to repeat it at another rate.
    package mutating func apply(_ samples: ArraySlice<Int16>, sampleRate: Int) -> (samples: [Int16], ramp: Ramp) {
        let ramp = Ramp(from: current, to: target, seconds: min(Self.rampSeconds, Double(samples.count) / Double(max(1, sampleRate))))
        current = target
        return (Self.scaled(samples, ramp, sampleRate: sampleRate), ramp)
    }

    /// One change of level: `from` at the first sample, `to` after `seconds`.
    package struct Ramp: Sendable, Equatable {
        package var from: Float
        package var to: Float
        package var seconds: Double
    }

    /// `samples` scaled by `ramp`, then by its final gain to the end.
    package static func scaled(_ samples: ArraySlice<Int16>, _ ramp: Ramp, sampleRate: Int) -> [Int16] {
        let rampCount = Int((ramp.seconds * Double(sampleRate)).rounded())
        var out = [Int16]()
        out.reserveCapacity(samples.count)
        for (i, sample) in samples.enumerated() {
            let gain = i < rampCount ? ramp.from + (ramp.to - ramp.from) * Float(i + 1) / Float(rampCount) : ramp.to
            out.append(Int16(clamping: Int((Float(sample) * gain).rounded())))
        }
        return out
    }
}

/// A speaker whose level can be set at once from any thread, without waiting for an actor's turn: the microphone gate
/// lowers the reply from the capture's own thread at the frame that shows the user may be cutting in
/// (`MicrophoneGate`), since on a loaded machine the cooperative pool, where the Talk loop's actor runs, can keep a
/// job waiting for hundreds of milliseconds. `PulsePlayback` keeps its level under its loop's lock, so it can.
package protocol ImmediatePlaybackGain: Sendable {
    /// `AudioPlaybackDevice.setGain(_:)` begun before it returns, from the calling thread.
    func setGainAtOnce(_ gain: Float)
}
