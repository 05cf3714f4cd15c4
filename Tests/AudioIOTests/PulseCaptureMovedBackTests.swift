import AudioIO
import Foundation
import Testing
import TalkLogging

/// Capture on a fallback source that something else moves back to its named source (the sound server itself, which
/// PulseAudio does when a stream's preferred source returns, or a mixer) says it is back, exactly once: the user's
/// status must not keep naming the fallback while the microphone is in use again.
@Suite(.serialized) struct PulseCaptureMovedBackTests {
    let logger = Logger(label: "test.pulse", handler: InMemoryLogHandler())
    static let extramic = "master=vsink.monitor source_name=extramic"

    @Test func `capture moved back to its named source by someone else says it is back`() async throws {
        try await PulseTestServer.with { server in
            let module = try await server.loadModule("module-remap-source", Self.extramic)
            // Its own watch looks only every 20 s here: the move back below is the server's or a mixer's.
            let capture = PulseCapture(source: "extramic", server: server.address, retryInterval: .seconds(20), logger: logger)
            let recorder = CaptureRecorder()
            await recorder.consume(try await capture.start())
            #expect(await recorder.wait(upTo: .seconds(10)) { frames, _ in frames.count >= 5 }, "no frames from extramic")

            try await server.unloadModule(module)
            let fellBack = await recorder.wait(upTo: .seconds(5)) { _, events in events.last == .resumed(device: "vmic") }
            let fallbackEvents = await recorder.events
            #expect(fellBack, "expected .interrupted then .resumed(vmic), got \(fallbackEvents)")

            // The source returns and is moved to at once, before capture's own watch looks for it.
            _ = try await server.loadModule("module-remap-source", Self.extramic)
            let output = try await server.pactl(["list", "short", "source-outputs"])
            // The client's stream, not the remap sources' own (module-remap-source.c).
            let index = try #require(
                output.split(separator: "\n").first { $0.contains("protocol-native") }?.split(separator: "\t").first, "no capture stream: \(output)")
            try await server.pactl(["move-source-output", String(index), "extramic"])
            let back = await recorder.wait(upTo: .seconds(5)) { _, events in events.last == .resumed(device: "extramic") }
            let backEvents = await recorder.events
            let streams = try await server.pactl(["list", "short", "source-outputs"])
            let sources = try await server.pactl(["list", "short", "sources"])
            #expect(back, "no .resumed(extramic) after the stream was moved back: \(backEvents); streams \(streams); sources \(sources)")
            #expect(await capture.currentDevice() == "extramic")
            // Nor may anything announce the return a second time.
            let before = await recorder.frames.count
            #expect(await recorder.wait(upTo: .seconds(3)) { frames, _ in frames.count >= before + 50 }, "frames stopped after the move back")
            let events = await recorder.events
            #expect(events.count == 3, "expected .interrupted, .resumed(vmic), .resumed(extramic), got \(events)")
            await capture.stop()
        }
    }
}
