import Foundation

/// The unit of captured audio everywhere downstream of AudioIO: 20 ms of 16 kHz mono signed 16-bit PCM.
package struct AudioFrame: Sendable, Equatable {
    package static let sampleRate = 16_000
    package static let samplesPerFrame = 320
    package static let durationMs = 20

    /// Counts frames from the start of a capture; it keeps counting across device loss and server restarts,
    /// so a gap in audio never reuses a number.
    package var sequence: UInt64
    /// Monotonic time (CLOCK_MONOTONIC, nanoseconds) at which the frame's last sample was captured, from the
    /// server's latency estimate. On a sink's monitor source it is when the sink plays that sample (which
    /// may be just after the frame arrives). For paced or fast file input it is the time the frame was handed over.
    package var captureTimeNs: UInt64
    package var samples: [Int16]
    /// Set by echo cancellation while a sound plays: the fraction (0...1) of this frame the sound's own echo
    /// explains (`EchoExplanation`). nil: no canceller, or nothing played that could be heard back.
    package var echoExplained: Float?
    /// Set by echo cancellation on a frame its later stages turned down while something played and the linear stage
    /// kept more than it keeps of the echo alone (`EchoTuning.LookBack`): the linear stage's output, where a user who
    /// began over the reply may have been taken down with the echo. nil on every other frame, so it costs nothing
    /// while nothing plays. Only the pre-roll of an utterance takes it (`AudioFrame.lookingBack`).
    package var onsetAlternative: [Int16]?

    package init(sequence: UInt64, captureTimeNs: UInt64, samples: [Int16]) {
        self.sequence = sequence
        self.captureTimeNs = captureTimeNs
        self.samples = samples
    }

    /// Position of the frame's first sample in the capture stream, in milliseconds.
    package var streamPositionMs: Int { Int(sequence) * Self.durationMs }
}

/// Mono PCM at any sample rate, as a producer (speech synthesis, a Gateway clip) hands it to playback.
package struct PCMBuffer: Sendable, Equatable {
    package var sampleRate: Int
    package var samples: [Int16]

    package init(sampleRate: Int, samples: [Int16]) {
        self.sampleRate = sampleRate
        self.samples = samples
    }

    package var durationSeconds: Double { sampleRate > 0 ? Double(samples.count) / Double(sampleRate) : 0 }
}

extension AudioFrame {
    /// An utterance's opening frames as the recogniser and the relay should hear them. `frames` run oldest first from
    /// the pre-roll; `positionMs` is where the utterance starts (the endpointer's first voiced frame). The frames just
    /// before it that carry an `onsetAlternative` (a run of at most `EchoTuning.LookBack.maxFrames`, ending at the
    /// start) take it: the endpointer heard them as silence because the echo stages took the user's first syllable
    /// down with the echo. Every other frame, and every frame of an utterance that did not open over a reply, is left
    /// as it is.
    package static func lookingBack(_ frames: [AudioFrame], before positionMs: Int) -> [AudioFrame] {
        var out = frames
        var index = out.lastIndex { $0.streamPositionMs < positionMs }
        var taken = 0
        while let i = index, taken < EchoTuning.LookBack.maxFrames, let alternative = out[i].onsetAlternative {
            out[i].samples = alternative
            taken += 1
            index = i > out.startIndex ? i - 1 : nil
        }
        return out
    }
}
