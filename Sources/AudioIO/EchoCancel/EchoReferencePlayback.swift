import TalkLogging

/// A speaker that tells the echo canceller what it plays: each buffer handed to the wrapped device is
/// resampled to 16 kHz and scheduled on an `EchoReference` from the moment it is handed over (plus the
/// expected output latency), and cut off where `stop()` or a failure silenced it. An `EchoCancellingCapture`
/// reading the same reference then removes its echo from the microphone.
///
/// The schedule errs early rather than late: the canceller can only model an echo that comes after its
/// reference, and its delay-agnostic mode finds and follows the real delay (the sound server's buffering,
/// the distance to the microphone) up to a few hundred milliseconds.
package actor EchoReferencePlayback: AudioPlaybackDevice {
    package nonisolated let reference: EchoReference
    private let device: any AudioPlaybackDevice
    private let expectedLatencyNs: UInt64
    private let now: @Sendable () -> UInt64
    private let logger: Logger

    /// - Parameters:
    ///   - expectedLatency: from `play` to the first sample reaching the sink; keep it at or below the real one.
    ///   - now: the monotonic clock (nanoseconds) that capture frames are stamped with.
    package init(
        _ device: any AudioPlaybackDevice, reference: EchoReference = EchoReference(), expectedLatency: Duration = .zero,
        now: @escaping @Sendable () -> UInt64 = monotonicNanoseconds, logger: Logger
    ) {
        self.device = device
        self.reference = reference
        self.expectedLatencyNs = UInt64(max(0, expectedLatency / .nanoseconds(1)))
        self.now = now
        self.logger = logger
    }

    package func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome {
        let far: [Int16]
        do {
            far = try buffer.resampled(to: EchoReference.sampleRate).samples
        } catch {
            logger.error("Cannot take the echo reference from this sound", metadata: ["audio.error": "\(error)"])
            far = []
        }
        reference.schedule(far, at: now() + expectedLatencyNs)
        do {
            let outcome = try await device.play(buffer)
            if outcome == .stopped { reference.cut(at: now()) }
            return outcome
        } catch {
            reference.cut(at: now())
            throw error
        }
    }

    package func stop() async {
        reference.cut(at: now())
        await device.stop()
    }

    package func close() async {
        reference.cut(at: now())
        await device.close()
    }
}
