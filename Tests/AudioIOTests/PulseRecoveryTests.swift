import AudioIO
import Foundation
import Testing
import TalkLogging

/// Capture and playback follow the sound server through restarts and vanished devices by themselves.
@Suite(.serialized) struct PulseRecoveryTests {
    let logger = Logger(label: "test.pulse", handler: InMemoryLogHandler())

    @Test func `capture resumes after the server is killed and restarted, and the sequence keeps increasing`() async throws {
        try await PulseTestServer.with { server in
            let capture = PulseCapture(source: "vmic", server: server.address, logger: logger)
            let recorder = CaptureRecorder()
            await recorder.consume(try await capture.start())
            #expect(await recorder.wait(upTo: .seconds(10)) { frames, _ in frames.count >= 10 })

            await server.kill()
            let interrupted = await recorder.wait(upTo: .seconds(5)) { _, events in
                events.contains { if case .interrupted = $0 { true } else { false } }
            }
            #expect(interrupted, "no .interrupted event after the server died")
            let framesBeforeRestart = await recorder.frames.count
            try await Task.sleep(for: .milliseconds(300))
            try await server.start()
            let restartedAt = ContinuousClock.now

            let resumed = await recorder.wait(upTo: .seconds(5)) { _, events in events.last == .resumed(device: "vmic") }
            let eventsAfterRestart = await recorder.events
            #expect(resumed, "no .resumed within 5 s of the server coming back: \(eventsAfterRestart)")
            #expect(ContinuousClock.now - restartedAt < .seconds(5))
            try await server.settleNullSink()
            let flowing = await recorder.wait(upTo: .seconds(10)) { frames, _ in frames.count >= framesBeforeRestart + 10 }
            let stalled = flowing ? "" : await server.captureState()
            let device = await capture.currentDevice()
            let latency = await capture.latency()
            #expect(flowing, "frames did not flow again after the restart; capture on \(String(describing: device)), latency \(String(describing: latency)); the server: \(stalled)")
            await capture.stop()

            let sequences = await recorder.sequences
            #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "sequence numbers must strictly increase")
            // The first frame after the outage is the first one delivered after the last .resumed, wherever
            // the test happened to look at the stream.
            let events = await recorder.events
            let resumedAt = try #require(await recorder.framesBeforeEvent.last)
            try #require(resumedAt > 0 && resumedAt < sequences.count, "no frames on both sides of the outage: \(events)")
            let gap = sequences[resumedAt] - sequences[resumedAt - 1]
            #expect(gap >= 15, "the sequence should skip the ~300+ ms outage, it moved by \(gap); events \(events), frames \(framesBeforeRestart) then \(resumedAt)")
        }
    }

    @Test func `capture from a source that is unloaded falls back to the default source`() async throws {
        try await PulseTestServer.with { server in
            let module = try await server.loadModule("module-remap-source", "master=vsink.monitor source_name=extramic")
            let capture = PulseCapture(source: "extramic", server: server.address, logger: logger)
            let recorder = CaptureRecorder()
            await recorder.consume(try await capture.start())
            #expect(await capture.currentDevice() == "extramic")
            #expect(await recorder.wait(upTo: .seconds(3)) { frames, _ in frames.count >= 5 })

            try await server.unloadModule(module)
            let fellBack = await recorder.wait(upTo: .seconds(5)) { _, events in
                events.count == 2 && events.last == .resumed(device: "vmic")
            }
            let events = await recorder.events
            #expect(fellBack, "expected .interrupted then .resumed(vmic), got \(events)")
            if case .interrupted(let reason) = events.first {
                #expect(reason.contains("extramic"))
            } else {
                Issue.record("the first event should be .interrupted")
            }
            #expect(await capture.currentDevice() == "vmic")
            let before = await recorder.frames.count
            #expect(await recorder.wait(upTo: .seconds(3)) { frames, _ in frames.count >= before + 5 })
            await capture.stop()
        }
    }

    @Test func `a named source missing after a server restart gives way to the default source`() async throws {
        try await PulseTestServer.with { server in
            _ = try await server.loadModule("module-remap-source", "master=vsink.monitor source_name=extramic")
            let capture = PulseCapture(source: "extramic", server: server.address, logger: logger)
            let recorder = CaptureRecorder()
            await recorder.consume(try await capture.start())
            await server.kill()
            try await server.start()  // the restarted server loads only its start-up modules: no extramic
            let resumed = await recorder.wait(upTo: .seconds(5)) { _, events in events.last == .resumed(device: "vmic") }
            let events = await recorder.events
            #expect(resumed, "expected .resumed(vmic) within 5 s of the restart, got \(events)")
            #expect(await capture.currentDevice() == "vmic")
            await capture.stop()
        }
    }

    @Test func `playback cut off by a server crash fails clearly and the next play works once it is back`() async throws {
        try await PulseTestServer.with { server in
            let playback = try PulsePlayback(server: server.address, logger: logger)
            let long = Task { try await playback.play(TestSignals.tone(rate: 24_000, seconds: 3)) }
            #expect(try await server.waitForPlaybackStream(on: "vsink"), "the sound never started")
            await server.kill()
            await #expect {
                _ = try await long.value
            } throws: { error in
                guard case PulseError.playbackInterrupted = error else { return false }
                return String(describing: error).contains("interrupted")
            }
            await #expect(throws: PulseError.self) { _ = try await playback.play(TestSignals.tone(rate: 24_000, seconds: 0.1)) }

            try await server.start()
            let events = await StreamRecorder.recording(playback.events).first(2, within: .seconds(5))
            #expect(events.count == 2, "expected .interrupted then .resumed within 5 s, got \(events)")
            if case .interrupted = events.first {} else { Issue.record("the first event should be .interrupted") }
            #expect(events.last == .resumed(device: "vsink"))
            let outcome = try await playback.play(TestSignals.tone(rate: 24_000, seconds: 0.1))
            #expect(outcome == .completed)
            await playback.close()
        }
    }

    @Test func `playback to a sink that is unloaded goes on on the default sink and says so`() async throws {
        try await PulseTestServer.with { server in
            let module = try await server.loadModule("module-null-sink", "sink_name=extrasink rate=24000 channels=1")
            let playback = try PulsePlayback(sink: "extrasink", server: server.address, logger: logger)
            let long = Task { try await playback.play(TestSignals.tone(rate: 24_000, seconds: 3)) }
            #expect(try await server.waitForPlaybackStream(on: "extrasink"), "the sound never started on extrasink")
            try await server.unloadModule(module)
            let events = await StreamRecorder.recording(playback.events).first(2, within: .seconds(5))
            if case .interrupted(let reason) = events.first {
                #expect(reason.contains("extrasink"))
            } else {
                Issue.record("the first event should be .interrupted, got \(events)")
            }
            #expect(events.last == .resumed(device: "vsink"))
            #expect(try await long.value == .completed)
            #expect(try await playback.play(TestSignals.tone(rate: 24_000, seconds: 0.1)) == .completed)
            await playback.close()
        }
    }
}
