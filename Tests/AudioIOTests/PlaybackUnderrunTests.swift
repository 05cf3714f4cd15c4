import CPulse
import Foundation
import Testing
import TalkLogging
@testable import AudioIO

/// A playback stream that runs dry, on a real headless server: the refill held up on the stream's own loop thread,
/// as a busy machine holds it up. Every underrun is counted and logged with where it fell, also between sounds
/// (where the stream idles between a reply's sentences) and not only inside one.
@Suite(.serialized) struct PlaybackUnderrunTests {
    /// The stall the loop is held for: longer than any buffer the stream keeps (`PlaybackBufferPlan`), so the sink
    /// runs dry whatever the machine's load.
    static let stall = Duration.milliseconds(600)

    /// The engine on a loop the test holds (`PulseMainloop.withLock`), its underruns counted.
    struct Rig {
        let loop: PulseMainloop
        let engine: PulseConfined<PulsePlaybackEngine>
        let underruns = PlaybackUnderrunCount()
        let log = InMemoryLogHandler.Store()

        init(server: PulseTestServer) throws {
            loop = try PulseMainloop(name: "test-playback")
            let (_, events) = AsyncStream.makeStream(of: PlaybackEvent.self)
            let logger = Logger(label: "test.underrun", handler: InMemoryLogHandler(store: log))
            engine = PulseConfined(
                PulsePlaybackEngine(
                    loop: loop, server: server.address, sink: nil, retryInterval: .milliseconds(250), events: events,
                    underruns: underruns, logger: logger),
                on: loop)
        }

        func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome {
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<PlaybackOutcome, any Error>) in
                engine.withLock { $0.play(buffer) { result in done.resume(with: result.mapError { $0 as any Error }) } }
            }
        }

        /// Holds the loop (no write request is answered) for `stall`.
        func stallRefill() {
            loop.withLock { Thread.sleep(forTimeInterval: Double(PlaybackUnderrunTests.stall / .milliseconds(1)) / 1000) }
        }

        /// The underrun lines logged so far, by where they fell.
        var underrunPlaces: [String] {
            log.events.filter { $0.message.description == PulsePlaybackEngine.underrunMessage }.compactMap { $0.metadata["audio.where"]?.description }
        }

        func close() { engine.shutdown { $0.close() } }
    }

    @Test func `a stream that runs dry between sounds reports the underrun`() async throws {
        try await PulseTestServer.with { server in
            let rig = try Rig(server: server)
            #expect(try await rig.play(TestSignals.tone(rate: 22_050, seconds: 0.3)) == .completed)
            // A loaded pass can starve the tone itself (reported, rightly, as in a sound): judge only what the stall caused.
            let before = rig.underrunPlaces.count
            // The stream now idles on silence, as between a reply's sentences.
            rig.stallRefill()
            // Only a deadline for a test gone wrong: the report comes once the loop runs again.
            let reported = await waitUntil(upTo: .seconds(10)) { rig.underrunPlaces.count > before }
            let stalled = rig.underrunPlaces.dropFirst(before)
            #expect(reported, "no underrun reported after the loop was held \(Self.stall); the log: \(rig.underrunPlaces)")
            #expect(stalled.allSatisfy { $0 == "between sounds" }, "\(rig.underrunPlaces)")
            rig.close()
        }
    }

    @Test func `a stream that runs dry inside a sound reports where, and the gap's length once it settles`() async throws {
        try await PulseTestServer.with { server in
            let rig = try Rig(server: server)
            async let outcome = rig.play(TestSignals.tone(rate: 22_050, seconds: 3))
            // Once the sound plays (its first write went out and the stream started), hold the refill.
            let playing = await waitUntil(upTo: .seconds(10)) {
                rig.engine.withLock { engine in (engine.current?.timeline.heardNs(ofSample: 0)) != nil }
            }
            #expect(playing)
            rig.stallRefill()
            #expect(try await outcome == .completed)
            #expect(rig.underruns.value > 0)
            #expect(rig.underrunPlaces.contains { $0.hasPrefix("in a sound") }, "\(rig.underrunPlaces)")
            let measured = rig.log.events.filter { $0.message.description == "Playback underrun's gap measured" }
            #expect(!measured.isEmpty, "the gap's length was never logged")
            rig.close()
        }
    }

    /// The buffer the server grants still holds 100 ms when it asks for more: that, not the attributes asked for, is
    /// how late a refill may be. 100 ms: the server's protocol thread on two loaded cores was now and then more than
    /// the 50 ms the stream used to leave late (`PlaybackBufferPlan`).
    @Test func `the server asks for more while it still holds 100 ms`() async throws {
        try await PulseTestServer.with { server in
            let rig = try Rig(server: server)
            async let outcome = rig.play(TestSignals.tone(rate: 22_050, seconds: 1))
            let granted = await waitUntil(upTo: .seconds(10)) {
                rig.engine.withLock { engine in engine.current.map { pa_stream_get_state($0.stream) == PA_STREAM_READY } ?? false }
            }
            #expect(granted)
            let slackMs = rig.engine.withLock { engine -> Double? in
                guard let stream = engine.current?.stream, let attr = pa_stream_get_buffer_attr(stream)?.pointee else { return nil }
                return PlaybackBufferPlan.grantedSlackMs(attr, rate: 22_050)
            }
            // A sample's rounding either way.
            #expect(try #require(slackMs) >= 99.9, "the server holds \(slackMs ?? 0) ms when it asks for more")
            _ = try await outcome
            rig.close()
        }
    }
}

/// Polls `condition` every 10 ms until it holds or `limit` has passed (a deadline for a test gone wrong only).
private func waitUntil(upTo limit: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
