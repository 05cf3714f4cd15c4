import AudioIO
import Foundation
import Testing
import TalkLogging

/// Echo cancellation on a real sound server: speech played into the null sink comes straight back on the
/// virtual microphone (its monitor), as a loudspeaker's sound would, and the playback tap's reference removes it.
@Suite(.serialized) struct EchoCancellationLoopbackTests {
    let logger = Logger(label: "test.aec.live", handler: InMemoryLogHandler())
    /// ERLE floors on the live loopback, dB: PulseAudio's measured 45-49 dB leaves room under load; PipeWire's
    /// measured 18-27 dB (issue 22 is to raise it) needs a floor under its range.
    static let pulseAudioFloorDb = 20.0
    static let pipeWireFloorDb = 12.0

    @Test func `speech played into the sink is cancelled in the cleaned capture: at least 20 dB on PulseAudio, 12 dB on PipeWire`() async throws {
        try await PulseTestServer.with { server in
            // The speech twice: the first pass lets the reference settle and the canceller converge.
            let speech = try EchoCancellerTests.farSpeech()
            let far = speech + speech
            let result = try await EchoBenchmark.loopback(
                far: far, sink: "vsink", source: "vmic", server: server.address,
                convergenceSeconds: Double(speech.count) / Double(AudioFrame.sampleRate), logger: logger)
            // A plain floor per sound server, so a canceller that stops cancelling fails the build on both.
            // PipeWire's (0.3.65) live loopback cancels less: `bench aec` measured 18-27 dB there against
            // 45-49 dB on PulseAudio. Reaching 40 dB on PipeWire is issue 22's work; until then its floor is
            // below that measured range and far above a canceller that does nothing (about 0 dB).
            let floorDb = server.kind == .pipewire ? Self.pipeWireFloorDb : Self.pulseAudioFloorDb
            #expect(result.erleDb >= floorDb,
                    "echo only \(result.erleDb) dB below the raw capture on the loopback (\(server.kind), floor \(floorDb) dB)")
            // The canceller found the echo about where the playback tap and the capture clock put it.
            let delay = try #require(result.estimatedDelayMs)
            #expect((0...300).contains(delay), "estimated echo delay \(delay) ms")
        }
    }

    @Test func `a source that does not hear the sink is reported, not measured as silence`() async throws {
        try await PulseTestServer.with { server in
            let fifo = server.directory.appendingPathComponent("quiet.fifo").path
            let module = try await server.loadModule(
                "module-pipe-source", "source_name=quietmic file=\(fifo) format=s16le rate=16000 channels=1")
            let far = Array(try EchoCancellerTests.farSpeech().prefix(3 * AudioFrame.sampleRate))
            await #expect(throws: EchoCancelError.noEcho(source: "quietmic", sink: "vsink")) {
                try await EchoBenchmark.loopback(far: far, sink: "vsink", source: "quietmic", server: server.address, logger: logger)
            }
            // Cleanup only (the private server is stopped after this): under CI's load pactl once failed to unload
            // the pipe source (exit 1, 4d603d6's CI), which says nothing of the error this test is about.
            _ = try? await server.unloadModule(module)
        }
    }
}
