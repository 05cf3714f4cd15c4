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
    /// The sound last put on the reference (as given, and from when), and the level it is heard at: `setGain`
    /// scales the reference from the moment it is called, as the wrapped device scales what it has yet to play.
    private var scheduled: (source: [Int16], startNs: UInt64)?
    private var gain = PlaybackGain()

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
        let startNs = now() + expectedLatencyNs
        scheduled = (far, startNs)
        gain.startSound()
        reference.schedule(gain.isUnity ? far : gain.apply(far[...], sampleRate: EchoReference.sampleRate).samples, at: startNs)
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
        gain = PlaybackGain()
        await device.stop()
    }

    package func setGain(_ target: Float) async {
        await device.setGain(target)
        let ramp = PlaybackGain.Ramp(from: gain.current, to: target, seconds: PlaybackGain.rampSeconds)
        gain.target = target
        gain.startSound()
        guard let (source, startNs) = scheduled, ramp.from != ramp.to else { return }
        let heard = min(source.count, Int((now() &- min(now(), startNs)) / EchoReference.nanosecondsPerSample))
        guard heard < source.count else { return }
        // The heard part keeps its old level: scale the whole sound by the old gain, then its rest by the ramp.
        let before = PlaybackGain.scaled(source[..<heard], .init(from: ramp.from, to: ramp.from, seconds: 0), sampleRate: EchoReference.sampleRate)
        let after = PlaybackGain.scaled(source[heard...], ramp, sampleRate: EchoReference.sampleRate)
        reference.schedule(before + after, at: startNs)
    }

    package func close() async {
        reference.cut(at: now())
        await device.close()
    }
}
