import Synchronization
import TalkLogging

/// What playback reports about its sound server between `play` calls.
package enum PlaybackEvent: Sendable, Equatable {
    /// The server went away or the sink vanished; a `play` in progress failed.
    case interrupted(reason: String)
    /// Playback can run again, on this sink: the default one while the chosen sink is gone, the chosen one
    /// again once it is back (a sound in progress moves back to it).
    case resumed(device: String)
}

/// How many underruns a `PulsePlayback`'s server reported, inside a sound or between sounds: for a caller's figures.
package final class PlaybackUnderrunCount: Sendable {
    private let count = Atomic<Int>(0)
    package init() {}
    package var value: Int { count.load(ordering: .relaxed) }
    func add() { count.wrappingAdd(1, ordering: .relaxed) }
}

/// The speaker through PulseAudio: mono PCM at the buffer's own rate, to the default sink or a named one,
/// with a small buffer so sound starts and `stop()` silences within 50 ms. Given an `EchoReference`, it puts
/// what it plays there, when the server says it is heard, for echo cancellation.
package actor PulsePlayback: AudioPlaybackDevice, ImmediatePlaybackGain {
    private let engine: PulseConfined<PulsePlaybackEngine>
    private let echoReference: EchoReference?
    /// Interruptions and recoveries, for a caller that wants to show them.
    package nonisolated let events: AsyncStream<PlaybackEvent>
    /// The underruns so far (each also logged, with where it fell and the gap's length).
    package nonisolated let underruns = PlaybackUnderrunCount()
    /// What the log line of every underrun says: `bench talk` counts the sessions' underruns by it.
    package static let underrunMessage = "Playback underrun: the sound has a gap"

    /// - Parameters:
    ///   - sink: a sink name (`openclaw-talk devices`), or nil for the server's default.
    ///   - server: a server address, or nil for libpulse's default (PULSE_SERVER, then the user socket).
    ///   - echoReference: where to put what is played, when it is heard, for an `EchoCancellingCapture`.
    package init(
        sink: String? = nil, server: String? = nil, retryInterval: Duration = .milliseconds(250),
        echoReference: EchoReference? = nil, logger: Logger
    ) throws {
        self.echoReference = echoReference
        let (events, continuation) = AsyncStream.makeStream(of: PlaybackEvent.self, bufferingPolicy: .bufferingNewest(16))
        self.events = events
        let loop = try PulseMainloop(name: "pulse-playback")
        loop.raiseThreadPriority(logger: logger)
        engine = PulseConfined(
            PulsePlaybackEngine(
                loop: loop, server: server, sink: sink, retryInterval: retryInterval, events: continuation,
                echoReference: echoReference, underruns: underruns, logger: logger),
            on: loop)
    }

    /// Plays mono PCM; returns when it has been heard (`.completed`) or cut short by `stop()` (`.stopped`).
    /// Throws `PulseError.serverUnreachable` without a server and `.playbackInterrupted` when the server or
    /// sink goes away mid-play; the next call reconnects. Cancelling the task stops the sound.
    package func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome {
        if Task.isCancelled { return .stopped }
        let engine = self.engine
        // Resampled here rather than on the loop thread, which must stay quick.
        let reference = echoReference == nil ? nil : try? buffer.resampled(to: EchoReference.sampleRate).samples
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<PlaybackOutcome, any Error>) in
                engine.withLock {
                    $0.play(buffer, reference: reference) { result in done.resume(with: result.mapError { $0 as any Error }) }
                }
            }
        } onCancel: {
            engine.withLock { $0.stop() }
        }
    }

    package func setGain(_ gain: Float) async {
        setGainAtOnce(gain)
    }

    /// The level is the engine's, under the loop's lock: set from the calling thread (`ImmediatePlaybackGain`).
    package nonisolated func setGainAtOnce(_ gain: Float) {
        engine.withLock { $0.setGain(gain) }
    }

    /// Silences playback at once; the `play` in progress returns `.stopped`.
    package func stop() async {
        engine.withLock { $0.stop() }
    }

    /// Disconnects for good; a `play` in progress returns `.stopped`. Dropping the last reference does the same.
    package func close() {
        engine.shutdown { $0.close() }
    }

    deinit {
        engine.shutdown { $0.close() }
    }
}
