import AudioIO
import Foundation
import Testing
import TalkLogging

/// Lowering a sound while it plays (the Talk loop does so while the user may be cutting in): what reaches the
/// sink goes quieter, and the echo reference goes quieter with it at the same moment, or the canceller would see
/// an echo path 15 dB weaker than the one it learnt, and take the echo it still hears for the user.
@Suite(.serialized) struct PlaybackGainLoopbackTests {
    let logger = Logger(label: "test.gain", handler: InMemoryLogHandler())

    static let toneSeconds = 5.0

    static func rms(_ samples: ArraySlice<Int16>) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))).squareRoot()
    }

    @Test func `a sound lowered mid-play is lowered in the sink and on the echo reference alike, and stop returns the level`() async throws {
        try await PulseTestServer.with { server in
            let rig = try await MonitoredPlayback.open(on: server, logger: logger)
            let (capture, recorder, reference, playback) = (rig.capture, rig.recorder, rig.reference, rig.playback)
            // Lowered once the sink is heard playing it and half a second more: on a loaded machine (CI, 8 suites
            // at once) a fixed 1.2 s after the play call once landed at the sound's very end. The sound is long
            // enough for a late wake still to leave a second of it lowered.
            let tone = TestSignals.tone(rate: 22_050, seconds: Self.toneSeconds, hz: 440, amplitude: 0.3)
            let played = Task { try await playback.play(tone) }
            let heard = await recorder.wait(upTo: .seconds(10)) { frames, _ in
                frames.suffix(3).allSatisfy { frame in Self.rms(frame.samples[...]) > 1000 } && frames.count >= 3
            }
            try #require(heard, "the sink never played the tone")
            try await Task.sleep(for: .milliseconds(500))
            await playback.setGain(0.18)
            #expect(try await played.value == .completed)
            // A stopped sound gives the level back: the next one plays at full.
            await playback.stop()
            #expect(try await playback.play(TestSignals.tone(rate: 22_050, seconds: 0.5, hz: 440, amplitude: 0.3)) == .completed)
            let playedAt = monotonicNanoseconds()
            #expect(await recorder.wait(upTo: .seconds(5)) { frames, _ in (frames.last?.captureTimeNs ?? 0) > playedAt + 300_000_000 })
            await capture.stop()
            await playback.close()

            let (captured, laid) = try #require(await recorder.frames.besideReference(reference), "nothing captured")

            // 20 ms windows where the reference plays; the level step is where it falls under half its first level.
            let window = 320
            let voiced = stride(from: 0, to: laid.count - window, by: window).filter { Self.rms(laid[$0..<($0 + window)]) > 100 }
            let first = try #require(voiced.first, "nothing on the reference")
            let full = Self.rms(laid[first + window..<first + 6 * window])
            let step = try #require(voiced.first { $0 > first + 6 * window && Self.rms(laid[$0..<($0 + window)]) < full / 2 }, "the reference was never lowered")
            // Within the first sound, away from its ends and the step (the echo may lag its placement by a few
            // milliseconds; the second sound's is placed early, as a new stream's start is not known to the sample).
            let playing = Set(voiced)
            let steady = voiced.filter { at in
                at < first + Int(Self.toneSeconds * 50) * window && abs(at - step) > 4 * window && (-4...4).allSatisfy { playing.contains(at + $0 * window) }
            }
            let ratios = steady.map { 20 * log10(max(1, Self.rms(captured[$0..<($0 + window)])) / Self.rms(laid[$0..<($0 + window)])) }
            let before = steady.filter { $0 < step }.map { Self.rms(captured[$0..<($0 + window)]) }
            let lowered = steady.filter { $0 > step && $0 < step + 40 * window }.map { Self.rms(captured[$0..<($0 + window)]) }
            try #require(!before.isEmpty && !lowered.isEmpty)
            let drop = 20 * log10(before.reduce(0, +) / Double(before.count) / (lowered.reduce(0, +) / Double(lowered.count)))
            #expect(abs(drop - 14.9) < 1.5, "the sink's sound fell \(drop) dB, not the 14.9 dB asked for")
            let spread = (ratios.max() ?? 0) - (ratios.min() ?? 0)
            // Where it moved (20 ms windows from the first captured sample, step included), to tell a reference placed
            // late from a gap in the sink's sound (a starved machine: whole windows of silence in the capture).
            let moved = zip(steady, ratios).filter { abs($0.1 - (ratios.sorted()[ratios.count / 2])) > 1.5 }
                .prefix(12).map { "\($0.0 / window): \(Int($0.1.rounded())) dB" }.joined(separator: ", ")
            #expect(spread < 1.5, "the echo against its reference moved by \(spread) dB: the reference did not follow the level (step at window \(step / window); off: \(moved))")
            // The last sound is at full level again.
            let last = try #require(voiced.last)
            #expect(Self.rms(laid[(last - 5 * window)..<last]) > full * 0.9, "the sound after stop() was not at full level")
        }
    }

    /// 5 ms windows: fine enough to time the step, long enough to hold a steady level of noise.
    static let stepWindow = 80

    /// Where `samples` first fall under half their level of the 100 ms before `after`, in `stepWindow` windows.
    static func step(in samples: [Int16], after: Int) -> Int? {
        let full = rms(samples[max(0, after - 1600)..<after])
        return stride(from: after, to: samples.count - stepWindow, by: stepWindow).first { rms(samples[$0..<($0 + stepWindow)]) < full / 2 }
    }

    /// White noise at the sink's own rate (16 kHz): the server plays it unresampled, so the sink's sound is the
    /// reference sample for sample, and its autocorrelation has one sharp peak to align the two by.
    static func noise(seconds: Double, amplitude: Double) -> PCMBuffer {
        var state: UInt32 = 12_345
        let samples = (0..<Int(16_000 * seconds)).map { _ -> Int16 in
            state = state &* 1_664_525 &+ 1_013_904_223
            let uniform: Double = Double(state >> 8) / 16_777_216 * 2 - 1
            return Int16(amplitude * 32767 * uniform)
        }
        return PCMBuffer(sampleRate: 16_000, samples: samples)
    }

    /// A reply lowered for a user cutting in goes quiet in the room within 60 ms, not after the sound the server
    /// already holds (80 ms on PulseAudio, 75 on PipeWire when only new samples were lowered; 30 to 45 ms rewriting
    /// the held sound), and the reference steps at the same sample of sound (measured within 2 ms on either server).
    @Test func `a lowering reaches the sink within 60 ms of being asked, and the echo reference steps with it`() async throws {
        try await PulseTestServer.with { server in
            let rig = try await MonitoredPlayback.open(on: server, logger: logger)
            let (capture, recorder, reference, playback) = (rig.capture, rig.recorder, rig.reference, rig.playback)
            let played = Task { try await playback.play(Self.noise(seconds: 3, amplitude: 0.3)) }
            let heard = await recorder.wait(upTo: .seconds(10)) { frames, _ in
                frames.suffix(3).allSatisfy { frame in Self.rms(frame.samples[...]) > 1000 } && frames.count >= 3
            }
            try #require(heard, "the sink never played the noise")
            try await Task.sleep(for: .milliseconds(500))
            let askedNs = monotonicNanoseconds()
            await playback.setGain(0.18)
            #expect(try await played.value == .completed)
            await capture.stop()
            await playback.close()

            let frames = await recorder.frames
            let origin = try #require(frames.firstSampleNs, "nothing captured")
            let (captured, laid) = try #require(frames.besideReference(reference))
            let asked = Int((Int64(askedNs) - Int64(origin)) / 62_500)
            try #require(asked > 3200 && asked + 1600 < captured.count, "the lowering was asked outside the capture")
            let sinkStep = try #require(Self.step(in: captured, after: asked), "the sink's sound was never lowered")
            let delayMs = Double(sinkStep - asked) / 16
            #expect(delayMs <= 60, "the sink's sound fell \(delayMs) ms after the lowering was asked")
            // The sound's own sample where each steps: the reference's 50 ms before the lowering found in the sink's.
            let search = 800
            let window = Array(laid[(asked - 1600)..<(asked - 800)])
            let found = try await TestSignals.correlate(window, in: Array(captured[(asked - 1600 - search)..<(asked - 800 + search)]))
            try #require(found.peak > 0.5, "the sink's sound is not the reference's (correlation \(found.peak))")
            let lag = found.lag - search
            let referenceStep = try #require(Self.step(in: laid, after: asked - 800), "the reference was never lowered")
            let offsetMs = Double(sinkStep - lag - referenceStep) / 16
            #expect(abs(offsetMs) <= 5, "the sink's sound stepped \(offsetMs) ms of sound after the reference did (the sink lags its reference by \(Double(lag) / 16) ms)")
        }
    }
}
