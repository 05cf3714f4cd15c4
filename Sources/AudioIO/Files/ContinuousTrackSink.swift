import Foundation
import TalkLogging

/// A speaker that records one continuous track: from `start()` on, every 20 ms of wall time becomes 20 ms of
/// the WAV file, silence while nothing plays, so sample *n* of the file is what a listener hears at the moment
/// sample *n* of a paced `FileCaptureDevice` started at the same time is captured. A file session then keeps
/// the timing of a live one (a reply's delay, a barge-in's cut) and it can be measured from the two files.
///
/// A `play` queues its samples and returns once the track has written them (`.completed`) or `stop()` flushed
/// them (`.stopped`). A writer that falls behind (a loaded machine) catches up at its next wake, so the track
/// never drifts from the clock; plays are meant to come one at a time, as for a sound card.
package actor ContinuousTrackSink: AudioPlaybackDevice {
    package let path: String
    package let sampleRate: Int
    private let clock: PacingClock
    private let file: WAVFileSink
    private let logger: Logger
    private var writer: Task<Void, Never>?
    private var startNs: UInt64 = 0
    private var chunksWritten: UInt64 = 0
    /// Samples waiting to be "heard", and the play calls waiting for them.
    private var queued: [Int16] = []
    private var queuedOffset = 0
    private var waiters: [(endsAt: Int, continuation: CheckedContinuation<PlaybackOutcome, Never>)] = []
    /// Samples taken from the queue so far (the end positions of `waiters` count in these).
    private var consumed = 0
    private var enqueued = 0
    /// The level the track is written at (`setGain`), from its next chunk on.
    private var gain = PlaybackGain()

    /// Creates (or truncates) the WAV file; nothing is written until `start()`.
    package init(path: String, sampleRate: Int = 16_000, clock: PacingClock = .live, logger: Logger) throws {
        self.path = path
        self.sampleRate = sampleRate
        self.clock = clock
        self.logger = logger
        file = try WAVFileSink(path: path, sampleRate: sampleRate, logger: logger)
    }

    /// Starts the track at the clock's now (call it together with the capture's `start()`). Idempotent.
    package func start() {
        guard writer == nil else { return }
        startNs = clock.now()
        writer = Task { [clock] in
            var next = UInt64(1)
            while !Task.isCancelled {
                do { try await clock.sleepUntil(self.startNs + next * 20_000_000) } catch { return }
                next = await self.writeDue()
            }
        }
    }

    /// Seconds of track written so far.
    package var writtenSeconds: Double { Double(chunksWritten) * 0.02 }

    package func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome {
        let samples = try Resampler.resample(buffer.samples, from: buffer.sampleRate, to: sampleRate)
        if samples.isEmpty { return .completed }
        queued += samples
        enqueued += samples.count
        let endsAt = enqueued
        return await withCheckedContinuation { waiters.append((endsAt, $0)) }
    }

    /// Flushes what is queued; the track goes on with silence from the next chunk.
    package func stop() {
        gain = PlaybackGain()
        consumed = enqueued
        queued = []
        queuedOffset = 0
        for waiter in waiters { waiter.continuation.resume(returning: .stopped) }
        waiters = []
    }

    package func setGain(_ target: Float) {
        gain.target = target
    }

    /// Stops the track where it is and closes the file. Idempotent.
    package func close() async {
        writer?.cancel()
        writer = nil
        stop()
        await file.close()
    }

    /// Writes every chunk due by now; returns the number of the next chunk to wait for.
    private func writeDue() async -> UInt64 {
        let due = (clock.now() &- startNs) / 20_000_000
        let chunk = sampleRate / 50
        while chunksWritten < due {
            var samples = [Int16](repeating: 0, count: chunk)
            let available = min(chunk, queued.count - queuedOffset)
            if available > 0 {
                let heard = queued[queuedOffset..<(queuedOffset + available)]
                samples.replaceSubrange(0..<available, with: gain.isUnity ? Array(heard) : gain.apply(heard, sampleRate: sampleRate).samples)
                queuedOffset += available
                consumed += available
            }
            do { _ = try await file.play(PCMBuffer(sampleRate: sampleRate, samples: samples)) } catch {
                logger.error("the output track cannot be written", metadata: ["audio.file": "\(path)", "error": "\(error)"])
                writer?.cancel()
                return chunksWritten + 1
            }
            chunksWritten += 1
            if queuedOffset == queued.count, queuedOffset > 0 {
                queued = []
                queuedOffset = 0
            }
            while let first = waiters.first, first.endsAt <= consumed {
                waiters.removeFirst()
                first.continuation.resume(returning: .completed)
            }
        }
        return chunksWritten + 1
    }
}
