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
            // The speech twice: the first pass lets the reference settle and the canceller converge.
            let speech = try EchoCancellerTests.farSpeech()
            let far = speech + speech
            let result = try await EchoBenchmark.loopback(
                far: far, sink: "vsink", source: "vmic", server: server.address,
                convergenceSeconds: Double(speech.count) / Double(AudioFrame.sampleRate), logger: logger)
            // On PipeWire (0.3.65) the live loopback cancels far less and varies: `bench aec` measured 18-27 dB
            // there against 45-49 dB on PulseAudio, with the echo lag moving between runs. Known, not hidden:
            // the runner reports it on every PipeWire run that falls short.
            withKnownIssue("PipeWire: weaker echo cancellation on the live loopback", isIntermittent: true) {
                #expect(result.erleDb >= 20, "echo only \(result.erleDb) dB below the raw capture on the loopback")
            } when: { server.kind == .pipewire }
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
            try await server.unloadModule(module)
        }
    }
}
