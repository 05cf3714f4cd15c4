import TalkLogging

/// Listens to a source (typically a sink's monitor) and tells when sound was first and last heard there,
/// in capture time. Measures playback start and stop latency from outside the player.
actor LoudnessProbe {
    private let capture: PulseCapture
    private let threshold: Int16
    private var frames: [AudioFrame] = []
    private var consumer: Task<Void, Never>?

    private static let nanosecondsPerSample = UInt64(1_000_000_000 / AudioFrame.sampleRate)

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

    /// The capture time of the first loud sample captured at or after `time`.
    func firstLoud(after time: UInt64) -> UInt64? {
        for frame in frames where frame.captureTimeNs >= time {
            for (i, s) in frame.samples.enumerated() where s.magnitude > threshold.magnitude {
                let t = sampleTime(frame, i)
                if t >= time { return t }
            }
        }
        return nil
    }

    /// The capture time of the last loud sample so far.
    func lastLoud() -> UInt64? {
        for frame in frames.reversed() {
            if let i = frame.samples.lastIndex(where: { $0.magnitude > threshold.magnitude }) {
                return sampleTime(frame, i)
            }
        }
        return nil
    }

    /// Capture time of the newest frame, to tell whether capture has caught up with a moment.
    func newestFrameTime() -> UInt64? { frames.last?.captureTimeNs }

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
        if frames.count > 1_500 { frames.removeFirst(500) }  // 30 s is plenty for any one measurement
    }

    private func sampleTime(_ frame: AudioFrame, _ index: Int) -> UInt64 {
        frame.captureTimeNs &- UInt64(AudioFrame.samplesPerFrame - 1 - index) * Self.nanosecondsPerSample
    }
}
