import AudioIO

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

/// A speaker that plays nothing and completes at once.
struct SilentPlayback: AudioPlaybackDevice {
    func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome { .completed }
    func stop() async {}
    func setGain(_ gain: Float) async {}
    func close() async {}
}

/// A speaker whose `play` goes on until `stop()`, then returns `.stopped`.
actor HeldPlayback: AudioPlaybackDevice {
    private var waiting: CheckedContinuation<Void, Never>?
    private(set) var started = false

    func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome {
        await withCheckedContinuation { waiting = $0; started = true }
        return .stopped
    }

    func stop() async {
        waiting?.resume()
        waiting = nil
    }

    func setGain(_ gain: Float) async {}

    func close() async { await stop() }
}
