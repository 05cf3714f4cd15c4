import TalkLogging

/// The microphone through PulseAudio: 16 kHz mono s16 in 20 ms frames from the default source or a named
/// one. It follows the server: a restart or a vanished source shows as `.interrupted`, then `.resumed` once
/// capture runs again (on the default source if the named one is gone, moving back to the named one with
/// another `.resumed` when it returns); the caller never restarts it.
package actor PulseCapture: AudioCaptureDevice {
    private let source: String?
    private let server: String?
    private let retryInterval: Duration
    private let logger: Logger
    private var session: PulseConfined<PulseCaptureEngine>?
    private var generation = 0

    /// - Parameters:
    ///   - source: a source name (`openclaw-talk devices`), or nil for the server's default.
    ///   - server: a server address, or nil for libpulse's default (PULSE_SERVER, then the user socket).
    ///   - retryInterval: how often to look for the server or device again after losing it.
    package init(source: String? = nil, server: String? = nil, retryInterval: Duration = .milliseconds(250), logger: Logger) {
        self.source = source
        self.server = server
        self.retryInterval = retryInterval
        self.logger = logger
    }

    /// Connects and starts capture. Throws `PulseError.serverUnreachable` when no server answers and
    /// `.deviceNotFound` for an unknown source name. A running capture is stopped first.
    package func start() async throws -> AsyncStream<CaptureEvent> {
        await stop()
        generation += 1
        let current = generation
        let (events, continuation) = AsyncStream.makeStream(
            of: CaptureEvent.self, bufferingPolicy: .bufferingNewest(500))
        let loop = try PulseMainloop(name: "pulse-capture")
        loop.raiseThreadPriority(logger: logger)
        let engine = PulseCaptureEngine(
            loop: loop, server: server, source: source, retryInterval: retryInterval, events: continuation,
            logger: logger)
        session = PulseConfined(engine, on: loop)
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { await self.stop(generation: current) }
        }
        do {
            try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
                loop.withLock {
                    engine.start { result in started.resume(with: result.mapError { $0 as any Error }) }
                }
            }
        } catch {
            await stop(generation: current)
            throw error
        }
        return events
    }

    /// Stops capture and finishes the event stream. Idempotent.
    package func stop() async {
        guard let session else { return }
        self.session = nil
        session.shutdown { $0.close() }
    }

    /// The latency the server measures from a sample entering the source to this client reading it (about
    /// 0-15 ms with the 20 ms fragments asked for). Negative on a sink's monitor, whose audio arrives before
    /// the sink plays it.
    package func latency() -> Duration? {
        return session?.withLock { $0.latency }
    }

    /// The source being captured now (after a fallback, the default one), or nil when not running.
    package func currentDevice() -> String? {
        return session?.withLock { $0.device }
    }

    deinit {
        session?.shutdown { $0.close() }
    }

    /// A consumer that stops listening stops the capture it started, not a later one.
    private func stop(generation: Int) async {
        if generation == self.generation { await stop() }
    }
}
