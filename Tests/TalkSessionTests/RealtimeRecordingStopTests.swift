import AudioIO
import Foundation
import TalkLogging
import Testing

@testable import TalkSession

/// `OPENCLAW_TALK_AEC_RECORD` (and `bench talk --record`) in realtime mode: the session's echo recording is written
/// whole before its stop returns, so the daemon, which exits once the session stopped, leaves a recording that
/// `bench aec --replay` can read, never an empty folder.
@Suite struct RealtimeRecordingStopTests {
    /// The realtime session ends its reader of the capture stream before it stops the capture, so the capture's
    /// own stop (its stream's `onTermination`) is under way first; the speaker stops in a sound server's round trip,
    /// long enough for that (as on the loopback, where 3 to 6 in 20 sessions' folders stayed empty). The session's
    /// stop must still return only with the recording written.
    @Test func `a realtime session stopped as the daemon stops it leaves its echo recording complete`() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rt-record-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let microphone = StopAwaitedMicrophone()
        let logger = Logger(label: "realtime-record-test", handler: InMemoryLogHandler())
        let capture = EchoCancellingCapture(microphone, reference: EchoReference(), recordTo: folder, logger: logger)
        let relay = ScriptedRelay()
        let session = RealtimeTalkSession(
            capture: capture, playback: ServerRoundTripSpeaker(microphone: microphone), relay: relay, logger: logger)
        try await session.start()
        // 30 s of microphone (a recording of a few MB, as a bench trial's), in steps the capture stream never drops.
        let frames = 1_500
        for step in 1...(frames / 100) {
            await microphone.push(amplitude: 2_000, count: 100)
            let heard = await Self.eventually { await session.framesHeard >= step * 100 }
            try #require(heard, "the session did not hear the microphone's frames")
        }
        await session.stop()
        #expect(await relay.stopped)
        let recording = try EchoCaptureRecording(folder: folder)
        #expect(recording.frames == frames)
    }

    private static func eventually(_ condition: () async -> Bool) async -> Bool {
        // A bound that only catches a session that never gets there, not a loaded machine.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

/// A `FakeMicrophone` that says when it was stopped.
private actor StopAwaitedMicrophone: AudioCaptureDevice {
    private let frames = FakeMicrophone()
    private var stopped = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func start() async throws -> AsyncStream<CaptureEvent> { await frames.start() }

    func stop() async {
        await frames.stop()
        stopped = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }

    func push(amplitude: Int16, count: Int) async { await frames.push(amplitude: amplitude, count: count) }

    /// Returns once `stop()` has been called.
    func untilStopped() async {
        guard !stopped else { return }
        await withCheckedContinuation { waiters.append($0) }
    }
}

/// A speaker whose stop takes until the microphone has stopped: a sound server's round trip, in which the
/// capture's own stop runs.
private struct ServerRoundTripSpeaker: AudioPlaybackDevice {
    let microphone: StopAwaitedMicrophone

    func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome { .completed }
    func stop() async { await microphone.untilStopped() }
    func setGain(_ gain: Float) async {}
    func close() async {}
}
