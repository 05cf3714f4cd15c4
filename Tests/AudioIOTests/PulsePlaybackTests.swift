import AudioIO
import Foundation
import Testing
import TalkLogging

/// Playback on a real headless server, listened to on the sink's monitor (which dates each sample by when
/// the sink plays it).
@Suite(.serialized) struct PulsePlaybackTests {
    let logger = Logger(label: "test.pulse", handler: InMemoryLogHandler())

    private func loudTimes(_ frames: [AudioFrame], after time: UInt64) -> [UInt64] {
        var times: [UInt64] = []
        for (f, frame) in frames.enumerated() {
            for (i, s) in frame.samples.enumerated() where s.magnitude > 1_000 {
                if let t = frames.captureTimeNs(ofSample: f * AudioFrame.samplesPerFrame + i), t >= time { times.append(t) }
            }
        }
        return times
    }

    @Test func `stop() during playback silences the sink at once and play returns stopped`() async throws {
        try await PulseTestServer.with { server in
            let capture = PulseCapture(source: "vsink.monitor", server: server.address, logger: logger)
            let recorder = CaptureRecorder()
            await recorder.consume(try await capture.start())
            try await server.settleNullSink()
            let playback = try PulsePlayback(server: server.address, logger: logger)

            let calledAt = monotonicNanoseconds()
            async let outcome = playback.play(TestSignals.tone(rate: 22_050, seconds: 3))
            let heard = await recorder.wait(upTo: .seconds(5)) { frames, _ in
                frames.contains { $0.captureTimeNs > calledAt && $0.samples.contains { $0.magnitude > 1_000 } }
            }
            #expect(heard, "the tone never reached the monitor")
            try await Task.sleep(for: .milliseconds(300))
            let stoppedAt = monotonicNanoseconds()
            await playback.stop()
            #expect(try await outcome == .stopped)
            // Only a deadline for a test gone wrong: the frames come as fast as the machine allows.
            let caughtUp = await recorder.wait(upTo: .seconds(5)) { frames, _ in
                (frames.last?.captureTimeNs ?? 0) > stoppedAt + 500_000_000
            }
            #expect(caughtUp)
            await capture.stop()
            await playback.close()

            let frames = await recorder.frames
            let lastLoud = try #require(loudTimes(frames, after: calledAt).last)
            let tailMs = (Double(lastLoud) - Double(stoppedAt)) / 1e6
            // Without a working stop the tone would go on for 2.5 s more. The bounds only tell a stop from
            // none (or from a tone that ended early); the tail's real size is `bench audio`'s figure.
            #expect(tailMs < 1_000, "sound went on \(tailMs) ms after stop()")
            #expect(tailMs > -500, "the tone should have played until stop(), last heard \(-tailMs) ms before it")
        }
    }

    @Test func `play returns once the sound has been played`() async throws {
        try await PulseTestServer.with { server in
            let capture = PulseCapture(source: "vsink.monitor", server: server.address, logger: logger)
            await CaptureRecorder().consume(try await capture.start())
            try await server.settleNullSink()
            let playback = try PulsePlayback(server: server.address, logger: logger)
            let start = ContinuousClock.now
            #expect(try await playback.play(TestSignals.tone(rate: 44_100, seconds: 0.5)) == .completed)
            let elapsed = ContinuousClock.now - start
            // Not before the sound has played; the upper bound only catches a play that hangs.
            #expect(elapsed > .milliseconds(450) && elapsed < .seconds(5), "0.5 s of audio took \(elapsed)")
            #expect(try await playback.play(PCMBuffer(sampleRate: 24_000, samples: [])) == .completed)
            await capture.stop()
            await playback.close()
        }
    }

    @Test(arguments: [0, -8_000, 10_000_000])
    func `a sample rate PulseAudio cannot play is refused clearly`(rate: Int) async throws {
        try await PulseTestServer.with { server in
            let playback = try PulsePlayback(server: server.address, logger: logger)
            await #expect {
                _ = try await playback.play(PCMBuffer(sampleRate: rate, samples: [1, 2, 3]))
            } throws: { error in
                guard case PulseError.invalidAudio = error else { return false }
                return String(describing: error).contains("\(rate) Hz")
            }
            await playback.close()
        }
    }

    @Test func `a new play cuts the one in progress short`() async throws {
        try await PulseTestServer.with { server in
            let capture = PulseCapture(source: "vsink.monitor", server: server.address, logger: logger)
            let recorder = CaptureRecorder()
            await recorder.consume(try await capture.start())
            try await server.settleNullSink()
            let playback = try PulsePlayback(server: server.address, logger: logger)
            let calledAt = monotonicNanoseconds()
            async let first = playback.play(TestSignals.tone(rate: 16_000, seconds: 3))
            // The second play comes once the first is heard, however long the machine takes to start it.
            let heard = await recorder.wait(upTo: .seconds(5)) { frames, _ in
                frames.contains { $0.captureTimeNs > calledAt && $0.samples.contains { $0.magnitude > 1_000 } }
            }
            #expect(heard, "the first tone never reached the monitor")
            let second = try await playback.play(TestSignals.tone(rate: 16_000, seconds: 0.1))
            #expect(try await first == .stopped)
            #expect(second == .completed)
            await capture.stop()
            await playback.close()
        }
    }
}
