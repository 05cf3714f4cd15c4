import Foundation
import TalkLogging
import Threading

/// A microphone with the speaker's echo removed: wraps a capture device and runs each 20 ms frame through
/// an `EchoCanceller` together with what the `EchoReference` says was playing while it was captured (fed by
/// `PulsePlayback(echoReference:)` or an `EchoReferencePlayback`). Everything else (device events, sequence numbers, capture times) passes
/// through unchanged, so it stands in wherever a capture device is expected.
///
/// The canceller belongs to this actor: the C handle is never touched from two threads. The actor runs on a thread
/// of its own (`ThreadSerialExecutor`, named `echo-cancel`), realtime where the system allows it
/// (`AudioThreadPriority`), and each frame is read from the device, cleaned and passed on there: its cost (about
/// 360 µs per frame in a debug build with the linear stage) is small, but on the cooperative pool it waited for a pool
/// thread behind the session, the gate and the sockets, and on a busy desktop behind every other busy thread.
package actor EchoCancellingCapture: AudioCaptureDevice {
    /// The thread's name as the system lists it.
    package static let threadName = "echo-cancel"
    private let executor: ThreadSerialExecutor
    package nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let device: any AudioCaptureDevice
    private let reference: EchoReference
    private let options: EchoCancellerOptions
    private let logger: Logger
    /// The canceller and the stages after it; nil while stopped.
    private var processor: EchoFrameProcessor?
    /// The last figures of a canceller that has stopped, so they can be read after the stream ended.
    private var lastStatistics: EchoCancellerStatistics?
    private var cursor = ReferenceCursor()
    private var aligner = EchoAligner()
    /// The reference's gap count the aligner was last told of.
    private var gapsSeen = 0
    private let recordFolder: String?
    private var recorder: EchoCaptureRecorder?
    /// What happened to the placement before the next recorded frame.
    private var mark = EchoCaptureRecorder.Mark.none
    /// Frames after a gap was announced or the reference moved (`AudioFrame.echoSettling`).
    private var settling = EchoSettlingWindow()
    private var pump: Task<Void, Never>?
    /// The last stop's work: the device's stop, then the recording's write. Every `stop()` awaits it, so a caller's stop
    /// returns only once the device has stopped and the recording is written, also when another stop began it: a
    /// caller that ends its reader of the stream before it stops the capture (the realtime session does) has its
    /// `onTermination` stop under way first, and must not go on (and let the process exit) before the write.
    private var stopping: Task<Void, Never>?
    private var generation = 0
    private var reportedFrameError = false

    package init(
        _ device: any AudioCaptureDevice, reference: EchoReference, options: EchoCancellerOptions = EchoCancellerOptions(),
        recordTo folder: String? = nil, logger: Logger
    ) {
        self.recordFolder = folder
        self.executor = ThreadSerialExecutor(name: Self.threadName) { [logger] in
            AudioThreadPriority.log(AudioThreadPriority.raiseCallingThread(), thread: Self.threadName, logger: logger)
        }
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
        processor = EchoFrameProcessor(fresh)
        cursor = ReferenceCursor()
        aligner = EchoAligner()
        reportedFrameError = false
        recorder = recordFolder.map { _ in EchoCaptureRecorder() }
        mark = .none
        settling = EchoSettlingWindow()
        let (stream, continuation) = AsyncStream.makeStream(of: CaptureEvent.self, bufferingPolicy: .bufferingNewest(500))
        pump = Task { await self.pump(events, into: continuation, generation: mine) }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { await self.stop(generation: mine) }
        }
        logger.info("Echo cancellation on", metadata: [
            "audio.aec": "webrtc", "audio.aec.delayMs": "\(options.streamDelayMs)", "audio.aec.record": "\(recordFolder ?? "-")",
        ])
        return stream
    }

    /// Stops the wrapped device and finishes the stream; returns once the device has stopped and the recording (if
    /// `recordTo` asked for one) is written, whichever stop began it. Idempotent.
    package func stop() async {
        if let pump {
            self.pump = nil
            generation += 1
            lastStatistics = processor?.canceller.statistics
            processor = nil
            pump.cancel()
            // Taken now: frames end here, and a `start()` while the device stops records afresh.
            let recording = recordFolder.flatMap { folder in recorder.map { (folder, $0) } }
            recorder = nil
            let (device, logger, previous) = (device, logger, stopping)
            stopping = Task {
                await previous?.value
                await device.stop()
                if let (folder, recording) = recording { await Self.write(recording, to: folder, logger: logger) }
            }
        }
        await stopping?.value
    }

    /// The canceller's own measurements (after a stop, its last ones), or nil before the first start.
    package func statistics() -> EchoCancellerStatistics? {
        processor?.canceller.statistics ?? lastStatistics
    }

    /// How far the echo lags the reference, as last measured from the signals (nil before a clear measurement).
    package func alignedLagMs() -> Double? {
        aligner.measuredLagMs
    }

    /// Cleans the device's frames as they come, on this actor's thread (`for await` keeps the caller's isolation),
    /// until the device's stream ends, the pump is cancelled, or a newer `start` or a `stop` makes it stale.
    private func pump(_ events: AsyncStream<CaptureEvent>, into continuation: AsyncStream<CaptureEvent>.Continuation, generation: Int) async {
        for await event in events {
            guard let cleaned = clean(event, generation: generation) else { break }
            continuation.yield(cleaned)
        }
        continuation.finish()
    }

    /// nil: this stream is stale (a newer `start` or a `stop` came since), so the pump ends.
    private func clean(_ event: CaptureEvent, generation: Int) -> CaptureEvent? {
        guard generation == self.generation, processor != nil else { return nil }
        switch event {
        case .frame(var frame):
            let start = cursor.start(of: frame)
            let far = reference.samples(from: start, count: frame.samples.count)
            cursor.fed(far)
            let gapAnnounced = reference.gaps != gapsSeen
            if gapAnnounced {
                gapsSeen = reference.gaps
                aligner.playbackHadGap()
                settling.placementChanged()
            }
            var movedNs: Int64?
            if let correction = aligner.add(reference: far, capture: frame.samples) {
                cursor.move(by: correction)
                processor?.relearn()
                settling.placementChanged()
                mark = .moved
                movedNs = correction
                logger.debug("Echo reference moved", metadata: [
                    "audio.aec.lagMs": "\(aligner.measuredLagMs ?? 0)", "audio.aec.moveMs": "\(Double(correction) / 1_000_000)",
                    "audio.aec.gaps": "\(gapsSeen)",
                ])
            }
            do {
                let raw = frame.samples
                let around = playedAround(start)
                guard let outcome = try processor?.process(raw: raw, far: far, playedAround: around) else { return nil }
                recorder?.append(raw: raw, far: far, playedAround: around, mark: mark, gap: gapAnnounced, movedNs: movedNs)
                mark = .none
                if outcome.changed {
                    // At debug level (unlike the per-frame trace, cheap enough to leave on while a rare
                    // self-interruption is waited for): when the linear stage's output was passed on.
                    let judged = processor?.lastJudgement
                    logger.debug(outcome.userOverEcho ? "User heard over the echo" : "User over the echo ended", metadata: [
                        "audio.aec.ms": "\(start / 1_000_000)",
                        "audio.aec.linearDb": "\(Self.decibels(judged?.ratio))",
                        "audio.aec.echoOnlyDb": "\(Self.decibels(judged?.echoOnly))",
                    ])
                }
                frame.samples = outcome.samples
                frame.echoExplained = outcome.echoExplained.map(Float.init)
                if options.linearStageMs > 0 { frame.linearSamples = outcome.linear }
                frame.echoExplainedClosely = outcome.echoExplainedClosely.map(Float.init)
                frame.echoSettling = settling.nextFrame()
                // Per-frame levels (RMS) at trace level: how a leak or a lost user was traced on the loopback.
                if logger.logLevel <= .trace {
                    logger.trace("Echo frame", metadata: [
                        "audio.aec.ms": "\(start / 1_000_000)", "audio.aec.far": "\(Self.rms(far))",
                        "audio.aec.raw": "\(Self.rms(raw))", "audio.aec.cancelled": "\(Self.rms(outcome.cancelled))",
                        "audio.aec.out": "\(Self.rms(frame.samples))",
                        "audio.aec.linear": "\(Self.rms(outcome.linear))", "audio.aec.userOverEcho": "\(outcome.userOverEcho ? 1 : 0)",
                    ])
                }
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
            aligner = EchoAligner()
            processor?.restart()
            settling = EchoSettlingWindow()
            mark = .restarted
            return event
        case .finished:
            return event
        }
    }

    /// The loudest 20 ms of the reference from 300 ms before the frame's to 300 ms after: wide enough for an
    /// echo whose reference is misplaced by a few hundred milliseconds, and for its ringing after the sound.
    private func playedAround(_ start: UInt64) -> Double {
        let span = EchoTuning.Residual.aroundNs
        let samples = reference.samples(from: start > span ? start - span : 0, count: EchoTuning.Residual.aroundSamples)
        return AudioLevel.loudestFrameRMS(samples)
    }

    /// An energy ratio in whole decibels, for a log line.
    private static func decibels(_ ratio: Double?) -> String {
        guard let ratio, ratio > 0 else { return "-" }
        return "\(Int((10 * log10(ratio)).rounded()))"
    }

    private static func rms(_ samples: [Int16]) -> Int {
        Int(AudioLevel.rms(samples))
    }

    /// Writes what `recordTo` asked for; a failure is logged with its reason, never thrown: the session it records
    /// goes on. Written off the capture's thread, which runs realtime where allowed: encoding and writing a long
    /// session's recording (4 MB for a minute) is one long run without blocking, counted against `RLIMIT_RTTIME`
    /// (rtkit's 200 ms, past which the kernel kills the process). `stop()` waits for it, so the recording is there once
    /// the capture stopped.
    private static func write(_ recording: EchoCaptureRecorder, to folder: String, logger: Logger) async {
        await Task.detached {
            do {
                try recording.write(to: folder)
                logger.notice("Echo cancellation recorded", metadata: ["audio.aec.record": "\(folder)", "audio.aec.frames": "\(recording.frames)"])
                if recording.framesDropped > 0 {
                    logger.warning("Echo cancellation recording holds the session's start only", metadata: [
                        "audio.aec.record": "\(folder)", "audio.aec.framesDropped": "\(recording.framesDropped)",
                    ])
                }
            } catch {
                logger.error("Echo cancellation recording not written", metadata: ["audio.aec.record": "\(folder)", "audio.error": "\(error)"])
            }
        }.value
    }

    private func stop(generation: Int) async {
        if generation == self.generation { await stop() }
    }
}
