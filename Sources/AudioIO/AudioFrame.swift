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
    /// Set by echo cancellation: what its linear stage alone (Speex's adaptive filter) left of the frame, where
    /// `samples` is what every stage left. The linear stage keeps a user's first frames over the reply whole, with
    /// the echo about as loud as them; the stages after it take those frames down with the echo. nil: no canceller, or
    /// none with a linear stage.
    package var linearSamples: [Int16]?
    /// The same for this frame alone against its close reference (`EchoExplanation.Reading.frame`): barge-in reads
    /// it while the reply plays lowered. nil: not measured.
    package var echoExplainedClosely: Float?
    /// Set by echo cancellation: the frame lies within the settling window after the reference's placement changed (a
    /// playback gap announced, the reference moved: `EchoSettlingWindow`), where the echo may sit off its reference
    /// and its leak reads as unexplained. False: settled, or not measured.
    package var echoSettling = false

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
