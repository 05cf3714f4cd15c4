import Foundation
import Testing
import TalkLogging
import TalkTestSupport

@testable import AudioIO

/// The residual echo suppressor behind the real WebRTC canceller, on a synthetic echo path: a reply that starts
/// after silence must leave no voiced frame in the cleaned capture, even with its reference misplaced as a
/// sink's monitor misplaces it, while a user talking over it, or talking with no echo at all, comes through.
@Suite struct ResidualEchoTests {
    let logger = Logger(label: "test.residual", handler: InMemoryLogHandler())
    static let rate = AudioFrame.sampleRate
    static let frame = AudioFrame.samplesPerFrame
    /// What the endpointer and the energy guard would take for sound (`BargeInPolicy.EnergyGuard.minimumRMS`).
    static let voicedRMS = 150.0

    /// The cleaned capture of `near` while `far` plays, its reference placed `referenceLateMs` after the echo.
    func cleaned(near: [Int16], far: [Int16], referenceLateMs: Int = 0, suppress: Bool = true, linearStageMs: Int = 0) async throws -> [Int16] {
        let t0: UInt64 = 5_000_000_000
        let playback = EchoReferencePlayback(SilentPlayback(), now: { t0 + UInt64(referenceLateMs) * 1_000_000 }, logger: logger)
        #expect(try await playback.play(PCMBuffer(sampleRate: Self.rate, samples: far)) == .completed)
        var options = EchoCancellerOptions(linearStageMs: linearStageMs)
        options.suppressResidualEcho = suppress
        let capture = EchoCancellingCapture(
            FrameListCapture(samples: near, firstSampleNs: t0), reference: playback.reference, options: options, logger: logger)
        return try await EchoCancellerTests.collect(try await capture.start())
    }

    static func rms(_ samples: ArraySlice<Int16>) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))).squareRoot()
    }

    /// Start indices of the 20 ms frames louder than `voicedRMS` in `samples[range]`.
    static func voicedFrames(_ samples: [Int16], in range: Range<Int>) -> [Int] {
        stride(from: range.lowerBound, to: min(range.upperBound, samples.count) - frame + 1, by: frame).filter {
            rms(samples[$0..<$0 + frame]) >= voicedRMS
        }
    }

    static func speech() throws -> [Int16] {
        try AudioFileReader.readMono(path: TestAudio.goForwardRaw).samples
            + AudioFileReader.readMono(path: TestAudio.pocketsphinxData + "/numbers.raw").samples
    }

    static func talker() throws -> [Int16] { try AudioFileReader.readMono(path: TestAudio.pocketsphinxData + "/something.raw").samples }

    /// The user's speech from `at` on, as the near end's float addend.
    static func user(_ talker: [Int16], at offset: Int, count: Int, gain: Float = 0.5) -> [Float] {
        var other = [Float](repeating: 0, count: count)
        for i in 0..<min(talker.count, max(0, count - offset)) { other[offset + i] = gain * Float(talker[i]) }
        return other
    }

    /// With the linear stage too: misplaced, its filter subtracts an echo that is not there and adds sound,
    /// which leaked 160 ms of echo before such frames were dropped.
    @Test(arguments: [0, 200], [0, 200])
    func `a reply's echo leaves no voiced frame, from its first syllable on`(referenceLateMs: Int, linearStageMs: Int) async throws {
        // One second of silence, then the reply: the canceller meets its echo unconverged.
        let far = [Int16](repeating: 0, count: Self.rate) + (try Self.speech())
        let near = EchoBenchmark.nearEnd(far: far, path: SyntheticEchoPath(delayMs: 80))
        let unsuppressed = try await cleaned(near: near, far: far, referenceLateMs: referenceLateMs, suppress: false, linearStageMs: linearStageMs)
        let leaking = Self.voicedFrames(unsuppressed, in: Self.rate..<far.count)
        // Misplaced, the canceller alone lets the echo through at first (what the suppressor is for).
        if referenceLateMs > 0 { #expect(!leaking.isEmpty, "the canceller alone left no voiced frame: nothing to test") }
        let out = try await cleaned(near: near, far: far, referenceLateMs: referenceLateMs, linearStageMs: linearStageMs)
        let voiced = Self.voicedFrames(out, in: 0..<out.count)
        #expect(voiced.isEmpty, "voiced echo frames at \(voiced.prefix(10).map { Double($0) / Double(Self.rate) }) s (canceller alone: \(leaking.count))")
    }

    @Test func `a user talking over the reply comes through`() async throws {
        let far = [Int16](repeating: 0, count: Self.rate) + (try Self.speech())
        let talker = try Self.talker()
        // From 4 s on (3 s into the reply), at about the echo's level.
        let offset = 4 * Self.rate
        let near = EchoBenchmark.nearEnd(far: far, path: SyntheticEchoPath(delayMs: 80), plus: Self.user(talker, at: offset, count: far.count))
        let alone = EchoMeasurement.pcm(Self.user(talker, at: offset, count: far.count))
        let out = try await cleaned(near: near, far: far)
        let canceller = try await cleaned(near: near, far: far, suppress: false)
        let span = offset..<min(far.count, offset + talker.count)
        let spoken = Self.voicedFrames(alone, in: span)
        let heard = Set(Self.voicedFrames(out, in: span))
        let byCanceller = Set(Self.voicedFrames(canceller, in: span))
        let kept = Double(spoken.filter(heard.contains).count) / Double(max(1, spoken.count))
        let keptByCanceller = Double(spoken.filter(byCanceller.contains).count) / Double(max(1, spoken.count))
        // The canceller itself loses some of the user's quieter frames in double talk; the suppressor adds little.
        #expect(keptByCanceller > 0.3 && kept >= 0.9 * keptByCanceller, "only \(Int(kept * 100)) % of the user's voiced frames came through (canceller alone \(Int(keptByCanceller * 100)) %)")
    }

    @Test func `with no echo at all (headphones, a file) the user comes through while the reply plays`() async throws {
        let far = try Self.speech()
        let talker = try Self.talker()
        let offset = Self.rate
        let near = EchoMeasurement.pcm(Self.user(talker, at: offset, count: far.count))
        let out = try await cleaned(near: near, far: far)
        let span = offset..<min(far.count, offset + talker.count)
        let spoken = Self.voicedFrames(near, in: span)
        let heard = Set(Self.voicedFrames(out, in: span))
        let kept = Double(spoken.filter(heard.contains).count) / Double(max(1, spoken.count))
        #expect(kept >= 0.9, "only \(Int(kept * 100)) % of the user's voiced frames came through")
    }

    /// What `OPENCLAW_TALK_LOG_LEVEL=trace` shows to trace a leak: each frame's levels, the echo going down.
    @Test(arguments: [Logger.Level.trace, .debug])
    func `at trace level every frame's levels are logged, at debug level none`(level: Logger.Level) async throws {
        let store = InMemoryLogHandler.Store()
        var traced = Logger(label: "test.residual.trace", handler: InMemoryLogHandler(store: store))
        traced.logLevel = level
        let far = [Int16](repeating: 0, count: Self.rate) + (try Self.speech())
        let near = EchoBenchmark.nearEnd(far: far, path: SyntheticEchoPath(delayMs: 80))
        let t0: UInt64 = 5_000_000_000
        let playback = EchoReferencePlayback(SilentPlayback(), now: { t0 }, logger: logger)
        #expect(try await playback.play(PCMBuffer(sampleRate: Self.rate, samples: far)) == .completed)
        let capture = EchoCancellingCapture(
            FrameListCapture(samples: near, firstSampleNs: t0), reference: playback.reference, logger: traced)
        _ = try await EchoCancellerTests.collect(try await capture.start())
        let frames = store.events.filter { "\($0.message)" == "Echo frame" }
        guard level == .trace else {
            #expect(frames.isEmpty)
            return
        }
        #expect(frames.count == near.count / Self.frame, "\(frames.count) lines for \(near.count / Self.frame) frames")
        func sum(_ key: String) -> Int { frames.suffix(100).compactMap { Int("\($0.metadata[key] ?? "")") }.reduce(0, +) }
        #expect(sum("audio.aec.raw") > 10 * sum("audio.aec.cancelled"), "the last 2 s: raw \(sum("audio.aec.raw")), cancelled \(sum("audio.aec.cancelled"))")
    }

    /// `OPENCLAW_TALK_LOG_LEVEL=debug` names each time the double-talk detector passed the linear stage's output
    /// on, with the ratios it judged by: how a self-interruption on the loopback was traced to it. On a
    /// synthetic path the user over the converged echo opens it; the echo alone never does.
    @Test(arguments: [true, false])
    func `at debug level the double-talk detector's openings are logged, with its ratios`(userSpeaks: Bool) async throws {
        let store = InMemoryLogHandler.Store()
        var logger = Logger(label: "test.residual.doubletalk", handler: InMemoryLogHandler(store: store))
        logger.logLevel = .debug
        let speech = try Self.speech()
        let far = [Int16](repeating: 0, count: Self.rate) + speech + speech
        let user = userSpeaks ? Self.user(try Self.talker(), at: 7 * Self.rate, count: far.count, gain: 0.3) : nil
        let near = EchoBenchmark.nearEnd(far: far, path: SyntheticEchoPath(delayMs: 80), plus: user)
        let t0: UInt64 = 5_000_000_000
        let playback = EchoReferencePlayback(SilentPlayback(), now: { t0 }, logger: logger)
        #expect(try await playback.play(PCMBuffer(sampleRate: Self.rate, samples: far)) == .completed)
        let capture = EchoCancellingCapture(
            FrameListCapture(samples: near, firstSampleNs: t0), reference: playback.reference, logger: logger)
        _ = try await EchoCancellerTests.collect(try await capture.start())
        let opened = store.events.filter { "\($0.message)" == "User heard over the echo" }
        guard userSpeaks else {
            #expect(opened.isEmpty, "opened on the echo alone: \(opened.map(\.metadata))")
            return
        }
        let first = try #require(opened.first, "the user over the echo never opened the detector")
        #expect(Int("\(first.metadata["audio.aec.linearDb"] ?? "")") != nil && Int("\(first.metadata["audio.aec.echoOnlyDb"] ?? "")") != nil,
                "\(first.metadata)")
        #expect(store.events.contains { "\($0.message)" == "User over the echo ended" })
    }
}
