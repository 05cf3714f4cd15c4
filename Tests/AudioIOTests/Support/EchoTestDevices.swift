import AudioIO
import Synchronization

/// A capture device that delivers a prepared list of frames at once, then `.finished`: a microphone whose
/// every sample and timestamp the test chose.
actor FrameListCapture: AudioCaptureDevice {
    private let frames: [AudioFrame]

    init(frames: [AudioFrame]) { self.frames = frames }

    /// `samples` cut into 20 ms frames whose last samples are captured `firstSampleNs` + n × 62.5 µs on.
    init(samples: [Int16], firstSampleNs: UInt64) {
        let n = AudioFrame.samplesPerFrame
        frames = stride(from: 0, to: samples.count - n + 1, by: n).enumerated().map { index, start in
            AudioFrame(
                sequence: UInt64(index), captureTimeNs: firstSampleNs + UInt64(start + n - 1) * 62_500,
                samples: Array(samples[start..<start + n]))
        }
    }

    func start() async throws -> AsyncStream<CaptureEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: CaptureEvent.self, bufferingPolicy: .unbounded)
        for frame in frames { continuation.yield(.frame(frame)) }
        continuation.yield(.finished)
        continuation.finish()
        return stream
    }

    func stop() async {}
}

/// Passes a capture device through while keeping a copy of every frame: the raw capture beside the cleaned one.
final class TeeCapture: AudioCaptureDevice {
    private let device: any AudioCaptureDevice
    private let copied = Mutex<[AudioFrame]>([])

    init(_ device: any AudioCaptureDevice) { self.device = device }

    var frames: [AudioFrame] { copied.withLock { $0 } }

    func start() async throws -> AsyncStream<CaptureEvent> {
        let events = try await device.start()
        let (stream, continuation) = AsyncStream.makeStream(of: CaptureEvent.self, bufferingPolicy: .unbounded)
        let task = Task {
            for await event in events {
                if case .frame(let frame) = event { self.copied.withLock { $0.append(frame) } }
                continuation.yield(event)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    func stop() async { await device.stop() }
}

/// A speaker that plays nothing and completes at once.
struct SilentPlayback: AudioPlaybackDevice {
    func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome { .completed }
    func stop() async {}
    func close() async {}
}
