import AudioIO
import Foundation
import Testing
import TalkLogging

/// Echo cancellation on a real sound server: speech played into the null sink comes straight back on the
/// virtual microphone (its monitor), as a loudspeaker's sound would, and the playback tap's reference removes it.
@Suite(.serialized) struct EchoCancellationLoopbackTests {
    let logger = Logger(label: "test.aec.live", handler: InMemoryLogHandler())
    /// ERLE floor on the live loopback in the median second, dB, on both sound servers: the issue's goal (40 dB). The
    /// median second measured 47-64 dB on PulseAudio and 50-62 dB on PipeWire (beside LiveTalkTurnTests, as in
    /// `make test`); a reference that moves under the converged canceller mid-reply (what the servers' drifting
    /// timing estimates did: 14-35 dB) or a canceller that does nothing (about 0 dB) falls below it.
    static let floorDb = 40.0

    @Test func `speech played into the sink is cancelled in the cleaned capture by at least 40 dB, on PulseAudio and PipeWire`() async throws {
        try await PulseTestServer.with { server in
            // The speech twice: the first pass lets the reference settle and the canceller converge.
            let speech = try EchoCancellerTests.farSpeech()
            let far = speech + speech
            let log = InMemoryLogHandler.Store()
            let logger = Logger(label: "test.aec.live", handler: InMemoryLogHandler(store: log))
            let result = try await EchoBenchmark.loopback(
                far: far, sink: "vsink", source: "vmic", server: server.address,
                convergenceSeconds: Double(speech.count) / Double(AudioFrame.sampleRate), logger: logger)
            // The figures, passed or not: a run's ERLE is one sample of a distribution (PipeWire's varies run to run).
            let moves = log.events.filter { "\($0.message)" == "Echo reference moved" }
                .map { "\($0.metadata["audio.aec.lagMs"].map { "\($0)" } ?? "?") (moved \($0.metadata["audio.aec.moveMs"].map { "\($0)" } ?? "?") ms)" }
            let underruns = log.events.filter { "\($0.message)".hasPrefix("Playback underrun") }.count
            print("""
                echo loopback (\(server.kind)): median second \(Self.dB(result.medianSecondErleDb)) dB, all \(Self.dB(result.erleDb)) dB, \
                seconds [\((result.secondErleDb ?? []).map { Self.dB($0) }.joined(separator: " "))], \
                lag \(Self.dB(result.alignedLagMs)) ms, delay \(result.estimatedDelayMs.map(String.init) ?? "-") ms, \
                reference moved at lags [\(moves.joined(separator: " "))], playback underruns \(underruns)
                """)
            // Most of the time (the median second): a sound server's rare glitch costs a second, not the figure.
            let floorDb = Self.floorDb
            let erle = try #require(result.medianSecondErleDb)
            #expect(erle >= floorDb,
                    "echo only \(erle) dB below the raw capture in the median second on the loopback (\(server.kind), floor \(floorDb) dB; over all \(result.erleDb) dB)")
            // The canceller found the echo about where the playback tap and the capture clock put it.
            let delay = try #require(result.estimatedDelayMs)
            #expect((0...300).contains(delay), "estimated echo delay \(delay) ms")
        }
    }

    private static func dB(_ value: Double?) -> String {
        value.map { String(format: "%.1f", $0) } ?? "-"
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
