import AudioIO
import Foundation
import Testing
import TalkLogging

/// Where playback puts each sound on the echo reference, checked against where its echo really is: the
/// sink's monitor, counted sample by sample from its first frame, is the clock every placement is measured on.
/// A linear echo filter converged on one sound's offset loses the next sound's first half second when that
/// one lands even a millisecond (16 samples) elsewhere; the canceller then leaks its onset as words.
@Suite(.serialized) struct ReferencePlacementLoopbackTests {
    let logger = Logger(label: "test.placement", handler: InMemoryLogHandler())

    @Test func `the sentences of a reply keep one offset to their echo, to the sample`() async throws {
        try await PulseTestServer.with { server in
            let rig = try await MonitoredPlayback.open(on: server, logger: logger)
            let (capture, recorder, reference, playback) = (rig.capture, rig.recorder, rig.reference, rig.playback)
            // At espeak's rate, each sound handed over once the one before has been heard, as the Talk loop does.
            // One sound four times: resampled alike, each echo has the same shape, so only placement moves its peak.
            // Each ends in 80 ms of silence, as a synthesised sentence does.
            let sweep = TestSignals.sweep(rate: 22_050, seconds: 0.3)
            let sounds = Array(repeating: PCMBuffer(sampleRate: 22_050, samples: sweep.samples + Array(repeating: 0, count: 1_764)), count: 4)
            for sound in sounds {
                #expect(try await playback.play(sound) == .completed)
            }
            let playedAt = monotonicNanoseconds()
            let caughtUp = await recorder.wait(upTo: .seconds(5)) { frames, _ in
                (frames.last?.captureTimeNs ?? 0) > playedAt + 400_000_000
            }
            #expect(caughtUp)
            await capture.stop()
            await playback.close()

            let (captured, laid) = try #require(await recorder.frames.besideReference(reference), "nothing captured")
            var offsets: [Int] = []
            for start in Self.soundStarts(laid) {
                let echoOf = try sweep.resampled(to: EchoReference.sampleRate).samples
                // The echo within 150 ms either side of where its reference was put (the next sound is 380 ms on).
                let from = max(0, start - 2_400), to = min(captured.count, start + echoOf.count + 2_400)
                let echo = try await TestSignals.correlate(echoOf, in: Array(captured[from..<to]))
                #expect(echo.peak > 0.5, "no clear echo of the sound placed at sample \(start): \(echo)")
                offsets.append(from + echo.lag - start)
            }
            #expect(offsets.count == 4, "sounds on the reference: \(Self.soundStarts(laid)) of \(laid.count); in the capture: \(Self.soundStarts(captured))")
            let spread = (offsets.max() ?? 0) - (offsets.min() ?? 0)
            #expect(spread <= 1, "echo offsets (samples) differ from sound to sound: \(offsets)")
        }
    }

    /// Where each sound starts on the laid-out reference: the first loud sample after 50 ms of silence.
    static func soundStarts(_ samples: [Int16]) -> [Int] {
        var starts: [Int] = []
        var quiet = 320
        for (i, s) in samples.enumerated() {
            if s.magnitude > 200 {
                if quiet >= 320 { starts.append(i) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return starts
    }
}
