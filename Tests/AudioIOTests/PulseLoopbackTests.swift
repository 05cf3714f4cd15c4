import AudioIO
import Foundation
import Testing
import TalkLogging
import TalkTestSupport

/// What goes out through PulseAudio playback comes back in through PulseAudio capture, on a real server.
@Suite(.serialized) struct PulseLoopbackTests {
    let logs = InMemoryLogHandler.Store()
    var logger: Logger { Logger(label: "test.pulse", handler: InMemoryLogHandler(store: logs)) }

    @Test(arguments: [16_000, 22_050, 24_000, 44_100])
    func `a sweep played into the null sink comes back on the virtual mic`(rate: Int) async throws {
        try await PulseTestServer.with { server in
            let capture = PulseCapture(source: "vmic", server: server.address, logger: logger)
            let recorder = CaptureRecorder()
            await recorder.consume(try await capture.start())
            let playback = try PulsePlayback(sink: "vsink", server: server.address, logger: logger)
            try await server.settleNullSink()
            try await Task.sleep(for: .milliseconds(100))

            let deliveredBeforePlay = await recorder.frames.count * AudioFrame.samplesPerFrame
            let outcome = try await playback.play(TestSignals.sweep(rate: rate))
            #expect(outcome == .completed)
            // Capture until it has caught up with the end of the sound, however far a busy machine lags.
            let playedAt = monotonicNanoseconds()
            let caughtUp = await recorder.wait(upTo: .seconds(10)) { frames, _ in
                (frames.last?.captureTimeNs ?? 0) > playedAt + 300_000_000
            }
            #expect(caughtUp, "the capture never caught up with the end of the sweep")
            await capture.stop()
            await playback.close()

            let frames = await recorder.frames
            let captured = frames.flatMap(\.samples)
            let reference = TestSignals.sweep(rate: AudioFrame.sampleRate).samples
            let c = try await TestSignals.correlate(reference, in: captured)
            let underruns = logs.events.filter { "\($0.message)".contains("underrun") }.count
            #expect(c.peak > 0.8, "the sweep came back at \(c.peak) of its level (\(underruns) playback underruns)")
            #expect(c.peak > 4 * c.runnerUp, "peak \(c.peak) does not stand out from \(c.runnerUp)")
            // Frames delivered before play() cannot hold the sweep, and it follows soon after; the bound only
            // catches a sweep found far from where it was played (the start latency is `bench audio`'s figure).
            let delayMs = Double(c.lag - deliveredBeforePlay) / Double(AudioFrame.sampleRate) * 1000
            #expect(delayMs >= 0 && delayMs < 3_000, "the sweep starts \(delayMs) ms of stream after play()")
            let times = frames.map(\.captureTimeNs)
            #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "capture times run forwards")
        }
    }

    @Test(.pulseAudioOnly("PipeWire resamples the 16 kHz pipe into its 48 kHz graph and back, so the samples differ"))
    func `samples written into a pipe source are captured bit-exact`() async throws {
        try await PulseTestServer.with { server in
            let fifo = server.directory.appendingPathComponent("mic.fifo").path
            let module = try await server.loadModule(
                "module-pipe-source", "source_name=pipemic file=\(fifo) format=s16le rate=16000 channels=1")
            let capture = PulseCapture(source: "pipemic", server: server.address, logger: logger)
            let recorder = CaptureRecorder()
            await recorder.consume(try await capture.start())

            let frameCount = 50
            let written = (0..<(frameCount * AudioFrame.samplesPerFrame)).map { Int16(truncatingIfNeeded: $0 &* 7919 &+ 13) }
            let handle = try #require(FileHandle(forWritingAtPath: fifo))
            handle.write(written.withUnsafeBytes { Data($0) })
            try handle.close()

            let complete = await recorder.wait(upTo: .seconds(3)) { frames, _ in frames.count >= frameCount }
            await capture.stop()
            try await server.unloadModule(module)
            #expect(complete)
            let frames = await recorder.frames
            #expect(Array(frames.flatMap(\.samples).prefix(written.count)) == written)
            #expect(frames.map(\.sequence) == Array(0..<UInt64(frames.count)))
        }
    }
}
