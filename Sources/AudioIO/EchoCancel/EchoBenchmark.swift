import Foundation
import Synchronization
import TalkLogging

/// Echo cancellation figures for `openclaw-talk bench aec` (and the loopback test): echo return loss
/// enhancement on synthetic echo paths and through a sound server's loopback, what double talk leaves of
/// the user's speech, and the CPU a 20 ms frame costs.
package enum EchoBenchmark {
    package struct Synthetic: Codable, Sendable, Equatable {
        package var delayMs: Int
        package var erleDb: Double
    }

    package struct Loopback: Codable, Sendable, Equatable {
        package var sink: String
        package var source: String
        /// Raw capture over cleaned capture, over the echo after `convergenceSeconds`.
        package var erleDb: Double
        /// The median of the same over each second (`EchoMeasurement.medianSecondERLE`).
        package var medianSecondErleDb: Double?
        /// The same for each second, in order: where a low figure comes from (a glitch, or the whole run).
        package var secondErleDb: [Double]?
        package var convergenceSeconds: Double
        /// The lag of the echo behind the reference, last measured from the signals (`EchoAligner`).
        package var alignedLagMs: Double?
        /// The reference-to-echo delay the canceller settled on (lead and sound-server latency together).
        package var estimatedDelayMs: Int?
        /// The library's own running ERLE estimate.
        package var libraryErleDb: Int?
        package var seconds: Double
    }

    package struct Report: Codable, Sendable, Equatable {
        package var signal: String
        package var convergenceSeconds: Double
        package var synthetic: [Synthetic]
        /// Correlation of the cleaned capture with the user's speech talking over the echo (1 = untouched).
        package var doubleTalkCorrelation: Double
        /// Thread CPU of one 20 ms frame (reference analysis and capture processing), in microseconds.
        package var microsecondsPerFrameMedian: Double
        package var microsecondsPerFrameP95: Double
        /// The median as a share of one core in real time.
        package var coreSharePercent: Double
        package var loopback: Loopback?
        package var loopbackUnavailable: String?
        /// `EchoCancellerOptions.linearStageMs` the figures were measured with.
        package var linearStageMs = 0

        package init(
            signal: String, convergenceSeconds: Double, synthetic: [Synthetic], doubleTalkCorrelation: Double,
            microsecondsPerFrameMedian: Double, microsecondsPerFrameP95: Double, coreSharePercent: Double
        ) {
            self.signal = signal
            self.convergenceSeconds = convergenceSeconds
            self.synthetic = synthetic
            self.doubleTalkCorrelation = doubleTalkCorrelation
            self.microsecondsPerFrameMedian = microsecondsPerFrameMedian
            self.microsecondsPerFrameP95 = microsecondsPerFrameP95
            self.coreSharePercent = coreSharePercent
        }
    }

    /// How long the canceller is given to converge before the echo is measured.
    package static let convergenceSeconds = 2.0
    package static let syntheticDelaysMs = [40, 80, 120]

    /// The synthetic half: `far` as the reply over each echo path, then `talker` over a 60 ms path's echo
    /// from 3 s on (double talk). CPU-bound (a few seconds in a debug build): run it off the cooperative pool.
    package static func synthetic(
        far: [Int16], talker: [Int16], options: EchoCancellerOptions = EchoCancellerOptions()
    ) throws -> (results: [Synthetic], doubleTalkCorrelation: Double, microsecondsPerFrame: [Double]) {
        let rate = AudioFrame.sampleRate
        var results: [Synthetic] = []
        var costs: [Double] = []
        for delay in syntheticDelaysMs {
            let near = nearEnd(far: far, path: SyntheticEchoPath(delayMs: delay))
            let (cleaned, cost) = try EchoMeasurement.cancel(near: near, far: far, options: options)
            costs += cost
            let erle = EchoMeasurement.erle(raw: near, cleaned: cleaned, fromSample: Int(convergenceSeconds * Double(rate)))
            results.append(Synthetic(delayMs: delay, erleDb: erle ?? .nan))
        }
        let offset = 3 * rate
        var user = [Float](repeating: 0, count: far.count)
        for i in 0..<max(0, min(talker.count, far.count - offset)) { user[offset + i] = 0.5 * Float(talker[i]) }
        let near = nearEnd(far: far, path: SyntheticEchoPath(delayMs: 60), plus: user)
        let (cleaned, _) = try EchoMeasurement.cancel(near: near, far: far, options: options)
        let spoken = EchoMeasurement.pcm(Array(user[offset...]))
        let kept = EchoMeasurement.laggedCorrelation(Array(cleaned[min(offset, cleaned.count)...]), spoken)
        return (results, kept.value, costs)
    }

    /// The echo of `far` (a synthetic path) plus low noise and `other` (a user talking).
    package static func nearEnd(far: [Int16], path: SyntheticEchoPath, plus other: [Float]? = nil) -> [Int16] {
        var near = path.echo(of: far)
        let noise = EchoMeasurement.noise(count: near.count, rms: 10)
        for i in near.indices { near[i] += noise[i] + (other.map { i < $0.count ? $0[i] : 0 } ?? 0) }
        return EchoMeasurement.pcm(near)
    }

    /// Plays `far` into `sink` and captures `source`, which hears it back (a sink's monitor, or a microphone
    /// near the speaker), through `PulsePlayback` feeding an `EchoReference` and `EchoCancellingCapture`; compares the raw
    /// capture with the cleaned one from `convergenceSeconds` into `far` on. The first seconds hold the
    /// reference's placement (`EchoAligner` needs 1.5 s of echo and a confirmation) and the canceller's
    /// convergence.
    package static func loopback(
        far: [Int16], sink: String, source: String, server: String? = nil, convergenceSeconds: Double = 4,
        options: EchoCancellerOptions = EchoCancellerOptions(), logger: Logger
    ) async throws -> Loopback {
        let raw = RecordingCapture(PulseCapture(source: source, server: server, logger: logger))
        let reference = EchoReference()
        // The canceller's own figure: the residual suppressor would silence the echo and make it infinite.
        var options = options
        options.suppressResidualEcho = false
        let capture = EchoCancellingCapture(raw, reference: reference, options: options, logger: logger)
        let cleaned = FrameLog()
        let stream = try await capture.start()
        let consumer = Task {
            for await case .frame(let frame) in stream { cleaned.append(frame) }
        }
        let playback = try PulsePlayback(sink: sink, server: server, echoReference: reference, logger: logger)
        // A short sound first: an idle null sink renders seconds ahead until a low-latency client wakes it.
        _ = try await playback.play(PCMBuffer(sampleRate: AudioFrame.sampleRate, samples: [Int16](repeating: 0, count: 8000)))
        try await Task.sleep(for: .milliseconds(300))
        let playedAt = monotonicNanoseconds()
        _ = try await playback.play(PCMBuffer(sampleRate: AudioFrame.sampleRate, samples: far))
        try await Task.sleep(for: .milliseconds(300))
        await capture.stop()
        await consumer.value
        await playback.close()

        let cleanedFrames = cleaned.frames
        let rawBySequence = Dictionary(raw.frames.map { ($0.sequence, $0) }, uniquingKeysWith: { a, _ in a })
        let pairs = cleanedFrames.compactMap { frame in rawBySequence[frame.sequence].map { ($0, frame) } }
        let measuredFrom = playedAt + UInt64(convergenceSeconds * 1e9)
        let first = pairs.firstIndex { $0.0.captureTimeNs >= measuredFrom } ?? pairs.count
        let erle = EchoMeasurement.erle(
            raw: pairs.flatMap(\.0.samples), cleaned: pairs.flatMap(\.1.samples),
            fromSample: first * AudioFrame.samplesPerFrame)
        guard let erle else {
            throw EchoCancelError.noEcho(source: source, sink: sink)
        }
        let seconds = EchoMeasurement.secondERLE(
            raw: pairs.flatMap(\.0.samples), cleaned: pairs.flatMap(\.1.samples), fromSample: first * AudioFrame.samplesPerFrame)
        let median = EchoMeasurement.medianSecondERLE(
            raw: pairs.flatMap(\.0.samples), cleaned: pairs.flatMap(\.1.samples), fromSample: first * AudioFrame.samplesPerFrame)
        let stats = await capture.statistics()
        return Loopback(
            sink: sink, source: source, erleDb: erle, medianSecondErleDb: median, secondErleDb: seconds, convergenceSeconds: convergenceSeconds,
            alignedLagMs: await capture.alignedLagMs(), estimatedDelayMs: stats?.delayMedianMs,
            libraryErleDb: stats?.echoReturnLossEnhancementDb, seconds: Double(far.count) / Double(AudioFrame.sampleRate))
    }
}

/// Frames kept in arrival order by any thread.
private final class FrameLog: Sendable {
    private let list = Mutex<[AudioFrame]>([])
    var frames: [AudioFrame] { list.withLock { $0 } }
    func append(_ frame: AudioFrame) { list.withLock { $0.append(frame) } }
}

/// A capture device passed through while every frame is kept: the raw capture beside the cleaned one.
private final class RecordingCapture: AudioCaptureDevice {
    private let device: any AudioCaptureDevice
    private let log = FrameLog()

    init(_ device: any AudioCaptureDevice) { self.device = device }

    var frames: [AudioFrame] { log.frames }

    func start() async throws -> AsyncStream<CaptureEvent> {
        let events = try await device.start()
        let (stream, continuation) = AsyncStream.makeStream(of: CaptureEvent.self, bufferingPolicy: .bufferingNewest(500))
        let task = Task { [log] in
            for await event in events {
                if case .frame(let frame) = event { log.append(frame) }
                continuation.yield(event)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    func stop() async { await device.stop() }
}
