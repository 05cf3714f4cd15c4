import Foundation
import TalkLogging

/// A file standing in for the microphone: a WAV (any rate, any channel count), a 16 kHz `.raw` file or
/// an Ogg Opus `.opus` file (see `AudioFileReader`),
/// mixed down and resampled to 16 kHz mono and delivered as 20 ms `AudioFrame`s, then trailing silence
/// (so an endpointer can close the last utterance), then `.finished`.
///
/// Paced in real time by default: frame `n` is handed over when its last sample would have been
/// captured, `(n + 1) × 20 ms` after `start()`. `.asFastAsPossible` delivers everything at once (for
/// benchmarks and tests); the stream buffers without limit, which a file of speech can afford.
package actor FileCaptureDevice: AudioCaptureDevice {
    /// How quickly frames are handed over.
    package enum Pacing: Sendable, Equatable {
        case realTime
        case asFastAsPossible
    }

    /// How the file is played into the capture stream.
    package struct Options: Sendable, Equatable {
        package var pacing: Pacing
        /// Silence appended after the file, rounded up to whole frames.
        package var trailingSilenceMs: Int
        /// Paced only: after the trailing silence, silent frames go on until `stop()` and `.finished` never
        /// comes, as a microphone in a quiet room (the Talk loop's `--input`, which runs until stopped).
        package var endlessSilence: Bool

        package init(pacing: Pacing = .realTime, trailingSilenceMs: Int = 1500, endlessSilence: Bool = false) {
            self.pacing = pacing
            self.trailingSilenceMs = trailingSilenceMs
            self.endlessSilence = endlessSilence
        }
    }

    package let path: String
    private let options: Options
    private let clock: PacingClock
    private let logger: Logger
    private var producer: Task<Void, Never>?
    private var continuation: AsyncStream<CaptureEvent>.Continuation?
    /// Sequence numbers keep counting across restarts, so a replayed file never reuses one.
    private var nextSequence: UInt64 = 0

    package init(path: String, options: Options = Options(), clock: PacingClock = .live, logger: Logger) {
        self.path = path
        self.options = options
        self.clock = clock
        self.logger = logger
    }

    /// Reads the file and starts delivering frames; a capture already running is stopped first.
    /// - Throws: `WAVError` (`OpusError` for `.opus`) when the file is missing or malformed, before the
    ///   stream starts.
    package func start() async throws -> AsyncStream<CaptureEvent> {
        stop()
        let audio = try AudioFileReader.readMono(path: path, sampleRate: AudioFrame.sampleRate)
        let frames = Self.frames(of: audio.samples, trailingSilenceMs: options.trailingSilenceMs)
        logger.info(
            "Capturing from file",
            metadata: [
                "audio.file": "\(path)", "audio.seconds": "\(audio.durationSeconds)", "audio.frames": "\(frames.count)",
            ]
        )
        let (stream, continuation) = AsyncStream.makeStream(of: CaptureEvent.self, bufferingPolicy: .unbounded)
        let firstSequence = nextSequence
        // An endless run has no last frame: a restart jumps far ahead so no sequence is reused.
        nextSequence += options.endlessSilence ? 1 << 40 : UInt64(frames.count)
        let task = Task { [options, clock] in
            await Self.deliver(
                frames, from: firstSequence, pacing: options.pacing, endless: options.endlessSilence, clock: clock, to: continuation)
        }
        continuation.onTermination = { _ in task.cancel() }
        producer = task
        self.continuation = continuation
        return stream
    }

    /// Stops delivery and finishes the stream. Idempotent.
    package func stop() {
        producer?.cancel()
        producer = nil
        continuation?.finish()
        continuation = nil
    }

    /// The samples cut into 320-sample frames (the last one zero-padded) followed by silent frames.
    package static func frames(of samples: [Int16], trailingSilenceMs: Int) -> [[Int16]] {
        let size = AudioFrame.samplesPerFrame
        var frames = stride(from: 0, to: samples.count, by: size).map { start -> [Int16] in
            let chunk = Array(samples[start..<min(start + size, samples.count)])
            return chunk.count == size ? chunk : chunk + [Int16](repeating: 0, count: size - chunk.count)
        }
        let silentFrames = (max(0, trailingSilenceMs) + AudioFrame.durationMs - 1) / AudioFrame.durationMs
        frames += [[Int16]](repeating: [Int16](repeating: 0, count: size), count: silentFrames)
        return frames
    }

    private static func deliver(
        _ frames: [[Int16]],
        from firstSequence: UInt64,
        pacing: Pacing,
        endless: Bool,
        clock: PacingClock,
        to continuation: AsyncStream<CaptureEvent>.Continuation
    ) async {
        let frameNs = UInt64(AudioFrame.durationMs) * 1_000_000
        let startNs = clock.now()
        for (index, samples) in frames.enumerated() {
            switch pacing {
            case .realTime:
                do { try await clock.sleepUntil(startNs + UInt64(index + 1) * frameNs) } catch { return }
            case .asFastAsPossible:
                // Let other tasks (the consumer) run now and then, without waiting on a clock.
                if index % 50 == 49 { await Task.yield() }
                if Task.isCancelled { return }
            }
            let frame = AudioFrame(
                sequence: firstSequence + UInt64(index),
                captureTimeNs: clock.now(),
                samples: samples
            )
            continuation.yield(.frame(frame))
        }
        if endless, pacing == .realTime {
            let silence = [Int16](repeating: 0, count: AudioFrame.samplesPerFrame)
            var index = frames.count
            while true {
                do { try await clock.sleepUntil(startNs + UInt64(index + 1) * frameNs) } catch { return }
                continuation.yield(.frame(AudioFrame(sequence: firstSequence + UInt64(index), captureTimeNs: clock.now(), samples: silence)))
                index += 1
            }
        }
        continuation.yield(.finished)
        continuation.finish()
    }
}
