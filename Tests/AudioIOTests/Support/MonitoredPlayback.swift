import AudioIO
import TalkLogging

/// A playback stream whose sound is heard on the test server's sink monitor, with the echo reference it writes:
/// what the loopback tests of placement and level compare, sample for sample. The capture is connected first and
/// the null sink settled (`PulseTestServer.settleNullSink`); the monitor's first timestamps slide while its stream
/// starts, so the rig is handed over half a second after the playback opened.
struct MonitoredPlayback {
    let capture: PulseCapture
    let recorder: CaptureRecorder
    /// Kept for the whole test (60 s): it is read once all sounds were heard, and on a loaded machine they are
    /// handed over seconds apart (the default 2 s history lost the first two sounds in one CI run).
    let reference: EchoReference
    let playback: PulsePlayback

    static func open(on server: PulseTestServer, logger: Logger) async throws -> MonitoredPlayback {
        let capture = PulseCapture(source: "vsink.monitor", server: server.address, logger: logger)
        let recorder = CaptureRecorder()
        await recorder.consume(try await capture.start())
        try await server.settleNullSink()
        let reference = EchoReference(historySeconds: 60)
        let playback = try PulsePlayback(server: server.address, echoReference: reference, logger: logger)
        try await Task.sleep(for: .milliseconds(500))
        return MonitoredPlayback(capture: capture, recorder: recorder, reference: reference, playback: playback)
    }
}
