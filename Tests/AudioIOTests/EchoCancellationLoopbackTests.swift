import AudioIO
import Foundation
import Testing
import TalkLogging

/// Echo cancellation on a real sound server: speech played into the null sink comes straight back on the
/// virtual microphone (its monitor), as a loudspeaker's sound would, and the playback tap's reference removes it.
@Suite(.serialized) struct EchoCancellationLoopbackTests {
    let logger = Logger(label: "test.aec.live", handler: InMemoryLogHandler())

    @Test func `speech played into the sink is cancelled in the cleaned capture by at least 20 dB`() async throws {
        try await PulseTestServer.with { server in
            let far = try EchoCancellerTests.farSpeech()
            let raw = TeeCapture(PulseCapture(source: "vmic", server: server.address, logger: logger))
            let reference = EchoReference()
            let capture = EchoCancellingCapture(raw, reference: reference, logger: logger)
            let cleaned = CaptureRecorder()
            await cleaned.consume(try await capture.start())
            let playback = EchoReferencePlayback(
                try PulsePlayback(sink: "vsink", server: server.address, logger: logger), reference: reference, logger: logger)
            try await server.settleNullSink()
            try await Task.sleep(for: .milliseconds(200))

            let framesBefore = await cleaned.frames.count
            #expect(try await playback.play(PCMBuffer(sampleRate: AudioFrame.sampleRate, samples: far)) == .completed)
            try await Task.sleep(for: .milliseconds(300))
            await capture.stop()
            await playback.close()

            // The cleaned stream may stop a frame short of the raw one: compare what both delivered.
            let cleanedFrames = await cleaned.frames
            let rawFrames = Array(raw.frames.prefix(cleanedFrames.count))
            #expect(rawFrames.map(\.sequence) == cleanedFrames.map(\.sequence))
            let rawSamples = rawFrames.flatMap(\.samples)
            // The echo came back: the raw capture holds speech of about the far end's level.
            let echoStart = framesBefore * AudioFrame.samplesPerFrame
            let erle = try #require(
                EchoMeasurement.erle(
                    raw: rawSamples, cleaned: cleanedFrames.flatMap(\.samples),
                    fromSample: echoStart + EchoCancellerTests.convergenceSamples),
                "no echo came back on the virtual microphone")
            #expect(erle >= 20, "echo only \(erle) dB below the raw capture on the loopback")
            // The canceller found the echo about where the playback tap and the capture clock put it.
            let delay = try #require(await capture.statistics()?.delayMedianMs)
            #expect((0...300).contains(delay), "estimated echo delay \(delay) ms")
        }
    }
}

