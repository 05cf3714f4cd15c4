import AudioIO
import Foundation
import Testing
import TalkLogging

/// A capture or playback asked for a named device that fell back to the default goes back to the named
/// device by itself when it returns, and says so.
@Suite(.serialized) struct PulseDeviceReturnTests {
    let logger = Logger(label: "test.pulse", handler: InMemoryLogHandler())
    static let extramic = "master=vsink.monitor source_name=extramic"

    @Test func `capture goes back to its named source when the source is loaded again`() async throws {
        try await PulseTestServer.with { server in
            let module = try await server.loadModule("module-remap-source", Self.extramic)
            let capture = PulseCapture(source: "extramic", server: server.address, logger: logger)
            let recorder = CaptureRecorder()
            await recorder.consume(try await capture.start())
            // A private server beside eight other tests has been seen to take over 3 s to deliver the first frames.
            #expect(await recorder.wait(upTo: .seconds(10)) { frames, _ in frames.count >= 5 }, "no frames from extramic")

            try await server.unloadModule(module)
            let fellBack = await recorder.wait(upTo: .seconds(5)) { _, events in events.last == .resumed(device: "vmic") }
            let fallbackEvents = await recorder.events
            #expect(fellBack, "expected .interrupted then .resumed(vmic), got \(fallbackEvents)")
            #expect(await recorder.frames.count >= 5)

            _ = try await server.loadModule("module-remap-source", Self.extramic)
            let loadedAt = ContinuousClock.now
            let back = await recorder.wait(upTo: .seconds(5)) { _, events in events.last == .resumed(device: "extramic") }
            let waited = ContinuousClock.now - loadedAt
            let events = await recorder.events
            #expect(back, "no .resumed(extramic) within 5 s of the source returning: \(events)")
            print("capture back on its source \(waited.formatted(.units(allowed: [.milliseconds]))) after it was loaded again")
            #expect(events.count == 3, "expected .interrupted, .resumed(vmic), .resumed(extramic), got \(events)")
            #expect(await capture.currentDevice() == "extramic")

            let before = await recorder.frames.count
            #expect(await recorder.wait(upTo: .seconds(3)) { frames, _ in frames.count >= before + 10 }, "frames stopped after the move back")
            await capture.stop()
            let sequences = await recorder.sequences
            #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "sequence numbers must strictly increase")
        }
    }

    @Test func `capture restarted without its named source moves to it once the source appears`() async throws {
        try await PulseTestServer.with { server in
            _ = try await server.loadModule("module-remap-source", Self.extramic)
            let capture = PulseCapture(source: "extramic", server: server.address, logger: logger)
            let recorder = CaptureRecorder()
            await recorder.consume(try await capture.start())
            await server.kill()
            try await server.start()  // the restarted server has only its start-up modules: no extramic yet
            let fellBack = await recorder.wait(upTo: .seconds(5)) { _, events in events.last == .resumed(device: "vmic") }
            let restartEvents = await recorder.events
            #expect(fellBack, "expected .resumed(vmic) after the restart, got \(restartEvents)")
            try await Task.sleep(for: .milliseconds(500))

            _ = try await server.loadModule("module-remap-source", Self.extramic)
            let loadedAt = ContinuousClock.now
            let back = await recorder.wait(upTo: .seconds(5)) { _, events in events.last == .resumed(device: "extramic") }
            let waited = ContinuousClock.now - loadedAt
            let events = await recorder.events
            #expect(back, "no .resumed(extramic) within 5 s of the source appearing: \(events)")
            print("capture on its source \(waited.formatted(.units(allowed: [.milliseconds]))) after it appeared after a restart")
            #expect(await capture.currentDevice() == "extramic")
            try await server.settleNullSink()
            let before = await recorder.frames.count
            #expect(await recorder.wait(upTo: .seconds(3)) { frames, _ in frames.count >= before + 10 }, "frames stopped after the move")
            await capture.stop()
            let sequences = await recorder.sequences
            #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "sequence numbers must strictly increase")
        }
    }

    @Test func `playback goes back to its named sink when the sink is loaded again, mid-sound`() async throws {
        try await PulseTestServer.with { server in
            let extrasink = "sink_name=extrasink rate=24000 channels=1"
            let module = try await server.loadModule("module-null-sink", extrasink)
            let playback = try PulsePlayback(sink: "extrasink", server: server.address, logger: logger)
            let recorder = await StreamRecorder.recording(playback.events)
            let long = Task { try await playback.play(TestSignals.tone(rate: 24_000, seconds: 2)) }
            #expect(try await server.waitForPlaybackStream(on: "extrasink"), "the sound never started on extrasink")

            try await server.unloadModule(module)
            let fellBack = await recorder.first(2, within: .seconds(5))
            #expect(fellBack.last == .resumed(device: "vsink"), "expected .interrupted then .resumed(vsink), got \(fellBack)")

            _ = try await server.loadModule("module-null-sink", extrasink)
            let loadedAt = ContinuousClock.now
            let events = await recorder.first(3, within: .seconds(5))
            let waited = ContinuousClock.now - loadedAt
            #expect(events.last == .resumed(device: "extrasink"), "no .resumed(extrasink) within 5 s of the sink returning: \(events)")
            print("playback back on its sink \(waited.formatted(.units(allowed: [.milliseconds]))) after it was loaded again")
            #expect(try await server.sinkOfPlaybackStream() == "extrasink", "the sound still plays elsewhere")
            #expect(try await long.value == .completed)
            await playback.close()
        }
    }

    @Test func `idle playback says when its named sink is back, and plays there next`() async throws {
        try await PulseTestServer.with { server in
            let extrasink = "sink_name=extrasink rate=24000 channels=1"
            let module = try await server.loadModule("module-null-sink", extrasink)
            let playback = try PulsePlayback(sink: "extrasink", server: server.address, logger: logger)
            let recorder = await StreamRecorder.recording(playback.events)
            let sound = Task { try await playback.play(TestSignals.tone(rate: 24_000, seconds: 2)) }
            #expect(try await server.waitForPlaybackStream(on: "extrasink"), "the sound never started on extrasink")
            try await server.unloadModule(module)
            let fellBack = await recorder.first(2, within: .seconds(5))
            #expect(fellBack.last == .resumed(device: "vsink"), "expected .interrupted then .resumed(vsink), got \(fellBack)")
            await playback.stop()  // idle from here on: nothing left to move
            #expect(try await sound.value == .stopped)

            _ = try await server.loadModule("module-null-sink", extrasink)
            let events = await recorder.first(3, within: .seconds(5))
            #expect(events.last == .resumed(device: "extrasink"), "no .resumed(extrasink) within 5 s of the sink returning: \(events)")
            let next = Task { try await playback.play(TestSignals.tone(rate: 24_000, seconds: 2)) }
            #expect(try await server.waitForPlaybackStream(on: "extrasink"), "the next sound does not play on the returned sink")
            await playback.stop()
            #expect(try await next.value == .stopped)
            await playback.close()
        }
    }
}
