import TalkLogging

/// A microphone with the speaker's echo removed: wraps a capture device and runs each 20 ms frame through
/// an `EchoCanceller` together with what the `EchoReference` says was playing while it was captured (fed by
/// an `EchoReferencePlayback`). Everything else (device events, sequence numbers, capture times) passes
/// through unchanged, so it stands in wherever a capture device is expected.
///
/// The canceller belongs to this actor: the C handle is never touched from two threads, and its cost (tens
/// of microseconds per frame, well under 1 % of a core) is too small to be worth a thread hop per frame.
package actor EchoCancellingCapture: AudioCaptureDevice {
    private let device: any AudioCaptureDevice
    private let reference: EchoReference
    private let options: EchoCancellerOptions
    private let logger: Logger
    private var canceller: EchoCanceller?
    /// The last figures of a canceller that has stopped, so they can be read after the stream ended.
    private var lastStatistics: EchoCancellerStatistics?
    private var cursor = ReferenceCursor()
    private var pump: Task<Void, Never>?
    private var generation = 0
    private var reportedFrameError = false

    package init(
        _ device: any AudioCaptureDevice, reference: EchoReference, options: EchoCancellerOptions = EchoCancellerOptions(),
        logger: Logger
    ) {
        self.device = device
        self.reference = reference
        self.options = options
        self.logger = logger
    }

    /// Starts the wrapped device; cleaned frames arrive on the stream.
    /// - Throws: `EchoCancelError` for options the canceller refuses (before the device starts), or what
    ///   the device throws.
    package func start() async throws -> AsyncStream<CaptureEvent> {
        await stop()
        guard options.sampleRate == AudioFrame.sampleRate else {
            throw EchoCancelError.unsupportedRate(options.sampleRate)
        }
        let fresh = try EchoCanceller(options: options)
        let events = try await device.start()
        generation += 1
        let mine = generation
        canceller = fresh
        cursor = ReferenceCursor()
        reportedFrameError = false
        let (stream, continuation) = AsyncStream.makeStream(of: CaptureEvent.self, bufferingPolicy: .bufferingNewest(500))
        pump = Task { [weak self] in
            for await event in events {
                guard let self, let cleaned = await self.clean(event, generation: mine) else { break }
                continuation.yield(cleaned)
            }
            continuation.finish()
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { await self.stop(generation: mine) }
        }
        logger.info("Echo cancellation on", metadata: ["audio.aec": "webrtc", "audio.aec.delayMs": "\(options.streamDelayMs)"])
        return stream
    }

    /// Stops the wrapped device and finishes the stream. Idempotent.
    package func stop() async {
        guard let pump else { return }
        self.pump = nil
        generation += 1
        lastStatistics = canceller?.statistics
        canceller = nil
        pump.cancel()
        await device.stop()
    }

    /// The canceller's own measurements (after a stop, its last ones), or nil before the first start.
    package func statistics() -> EchoCancellerStatistics? {
        canceller?.statistics ?? lastStatistics
    }

    /// nil: this stream is stale (a newer `start` or a `stop` came since), so the pump ends.
    private func clean(_ event: CaptureEvent, generation: Int) -> CaptureEvent? {
        guard generation == self.generation, let canceller else { return nil }
        switch event {
        case .frame(var frame):
            let far = reference.samples(from: cursor.start(of: frame), count: frame.samples.count)
            do {
                try canceller.analyzeReverse(far)
                frame.samples = try canceller.process(frame.samples)
            } catch {
                // Only a device delivering odd frames gets here: pass its audio on rather than lose it.
                if !reportedFrameError {
                    reportedFrameError = true
                    logger.error("Echo cancellation skipped a frame", metadata: ["audio.error": "\(error)"])
                }
            }
            return .frame(frame)
        case .interrupted, .resumed:
            // Another device or a restarted server: the echo path and the capture clock start afresh.
            cursor = ReferenceCursor()
            return event
        case .finished:
            return event
        }
    }

    private func stop(generation: Int) async {
        if generation == self.generation { await stop() }
    }
}

/// Where in the reference each captured frame's echo reference starts. Reads follow each other sample for
/// sample, so the canceller sees one continuous far-end signal: capture timestamps come from the server's
/// latency estimates and wander by tens of milliseconds (up to ±30 ms on PulseAudio's monitor sources),
/// while the samples themselves follow each other exactly. Only a gap in the frame sequence (an outage) or
/// a drift beyond `tolerance` re-anchors the cursor on the frame's own time. The reference is read `lead`
/// ahead of that time, so that an anchor taken from a late timestamp still leaves the echo after its
/// reference, where the canceller can find it.
struct ReferenceCursor {
    static let toleranceNs: UInt64 = 80_000_000
    static let leadNs: UInt64 = 20_000_000
    private var next: (sequence: UInt64, start: UInt64)?

    mutating func start(of frame: AudioFrame) -> UInt64 {
        let span = UInt64(frame.samples.count) * EchoReference.nanosecondsPerSample
        // captureTimeNs stamps the frame's last sample.
        let own = frame.captureTimeNs &+ EchoReference.nanosecondsPerSample &- span &+ Self.leadNs
        let start: UInt64
        if let next, next.sequence == frame.sequence, (next.start > own ? next.start - own : own - next.start) <= Self.toleranceNs {
            start = next.start
        } else {
            start = own
        }
        next = (frame.sequence &+ 1, start + span)
        return start
    }
}
