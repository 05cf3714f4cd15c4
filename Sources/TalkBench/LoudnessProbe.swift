import AudioIO
import TalkLogging

/// Listens to a source (typically a sink's monitor) and tells when sound was first and last heard there.
/// Measures playback start and stop latency from outside the player.
actor LoudnessProbe {
    private let capture: PulseCapture
    private let threshold: Int16
    private var frames: [AudioFrame] = []
    /// When each frame reached the probe (monotonic ns), index for index with `frames`.
    private var arrivals: [UInt64] = []
    private var consumer: Task<Void, Never>?

    /// - Parameter threshold: the absolute sample value above which a sample counts as sound.
    init(source: String?, server: String?, threshold: Int16 = 1_000, logger: Logger) {
        capture = PulseCapture(source: source, server: server, logger: logger)
        self.threshold = threshold
    }

    func start() async throws {
        let events = try await capture.start()
        consumer = Task { [weak self] in
            for await case .frame(let frame) in events { await self?.append(frame) }
        }
    }

    func stop() async {
        await capture.stop()
        consumer = nil
    }

    /// When the frame holding the first loud sample after `time` reached the probe. Arrival, not capture
    /// time: a monitor's capture times follow the server's latency estimate, which lags by hundreds of
    /// milliseconds while a null sink leaves its idle timing for a new stream, and then dates the sound
    /// before the `play()` that made it. Arrival can only be late, by at most a frame (20 ms), since a sink
    /// rendering ahead hands the monitor whole chunks at once and a sample's place in its frame says nothing.
    func firstHeard(after time: UInt64) -> UInt64? {
        zip(frames, arrivals).first { frame, arrival in arrival > time && isLoud(frame) }?.1
    }

    /// When the last loud sample so far reached the probe (dated as in `firstHeard`).
    func lastHeard() -> UInt64? {
        frames.lastIndex(where: isLoud).map { arrivals[$0] }
    }

    /// When the newest frame arrived, to tell whether capture has caught up with a moment.
    func newestArrival() -> UInt64? { arrivals.last }

    /// Waits until `condition` holds for this probe, polling every 5 ms; false after `timeout`.
    func wait(upTo timeout: Duration, until condition: @Sendable (isolated LoudnessProbe) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition(self)
    }

    private func append(_ frame: AudioFrame) {
        frames.append(frame)
        arrivals.append(monotonicNanoseconds())
        if frames.count > 1_500 {
            frames.removeFirst(500)
            arrivals.removeFirst(500)
        }  // 30 s is plenty for any one measurement
    }

    private func isLoud(_ frame: AudioFrame) -> Bool {
        frame.samples.contains { $0.magnitude > threshold.magnitude }
    }
}
