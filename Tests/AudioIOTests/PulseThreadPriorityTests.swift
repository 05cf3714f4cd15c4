import AudioIO
import Foundation
import TalkLogging
import TalkTestSupport
import Testing
import Threading

/// The capture and playback loops run realtime where the system allows it: in the normal class, on a busy desktop,
/// the playback loop refilled the server late (the reply got gaps, and the canceller lost seconds to each) and capture
/// reached the canceller late.
@Suite(.serialized) struct PulseThreadPriorityTests {
    let logger = Logger(label: "test.pulse.priority", handler: InMemoryLogHandler())

    @Test func `where realtime is allowed, the capture and playback loops run round-robin realtime`() async throws {
        let allowed = await realtimeAllowed(priority: AudioThreadPriority.realtimePriority)
        try await PulseTestServer.with { server in
            let capture = PulseCapture(source: "vsink.monitor", server: server.address, logger: logger)
            await CaptureRecorder().consume(try await capture.start())
            let playback = try PulsePlayback(server: server.address, logger: logger)
            #expect(try await playback.play(TestSignals.tone(rate: 16_000, seconds: 0.2)) == .completed)
            let listed = ThreadList.current()
            await capture.stop()
            await playback.close()
            let expected = allowed ? ThreadList.roundRobin : 0
            let loops = listed.filter { $0.name == "pulse-capture" || $0.name == "pulse-playback" }
            #expect(Set(loops.map(\.name)) == ["pulse-capture", "pulse-playback"])
            #expect(loops.allSatisfy { $0.policy == expected }, "\(loops)")
        }
    }
}
