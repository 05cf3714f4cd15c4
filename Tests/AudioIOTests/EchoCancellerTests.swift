import Foundation
import Synchronization
import Testing
import TalkLogging
import TalkTestSupport

@testable import AudioIO

/// Echo cancellation on a synthetic echo path: speech from pocketsphinx-testdata is the far end, its echo
/// (delayed, filtered, with a reflection) plus low noise the near end.
@Suite struct EchoCancellerTests {
    let logger = Logger(label: "test.aec", handler: InMemoryLogHandler())
    static let rate = AudioFrame.sampleRate
    /// What the canceller may take to converge; the echo is measured after it.
    static let convergenceSamples = 2 * rate

    /// goforward.raw then numbers.raw: about 6.8 s of speech.
    static func farSpeech() throws -> [Int16] {
        try AudioFileReader.readMono(path: TestAudio.goForwardRaw).samples
            + AudioFileReader.readMono(path: TestAudio.pocketsphinxData + "/numbers.raw").samples
    }

    @Test(arguments: [40, 80, 120])
    func `the echo in the cleaned capture is at least 20 dB below the raw capture`(delayMs: Int) async throws {
        let far = try Self.farSpeech()
        let near = EchoBenchmark.nearEnd(far: far, path: SyntheticEchoPath(delayMs: delayMs))
        // The far end is played at 22.05 kHz through the playback tap, as speech synthesis would hand it over.
        let t0: UInt64 = 5_000_000_000
        let playback = EchoReferencePlayback(SilentPlayback(), now: { t0 }, logger: logger)
        let played = try PCMBuffer(sampleRate: Self.rate, samples: far).resampled(to: 22_050)
        #expect(try await playback.play(played) == .completed)

        let capture = EchoCancellingCapture(
            FrameListCapture(samples: near, firstSampleNs: t0), reference: playback.reference, logger: logger)
        let cleaned = try await Self.collect(try await capture.start())
        #expect(cleaned.count == near.count / AudioFrame.samplesPerFrame * AudioFrame.samplesPerFrame)
        let erle = try #require(EchoMeasurement.erle(raw: near, cleaned: cleaned, fromSample: Self.convergenceSamples))
        #expect(erle >= 20, "echo only \(erle) dB below the raw capture with a \(delayMs) ms path")
        let stats = try #require(await capture.statistics())
        #expect(stats.delayMedianMs != nil)
    }

    @Test func `near-end speech survives cancellation while the echo plays`() async throws {
        let far = try Self.farSpeech()
        let talker = try AudioFileReader.readMono(path: TestAudio.pocketsphinxData + "/something.raw").samples
        // The user talks from 3 s on, over the echo, at about the echo's level.
        let offset = 3 * Self.rate
        var other = [Float](repeating: 0, count: far.count)
        for i in 0..<min(talker.count, far.count - offset) { other[offset + i] = 0.5 * Float(talker[i]) }
        let path = SyntheticEchoPath(delayMs: 60)
        let near = EchoBenchmark.nearEnd(far: far, path: path, plus: other)
        let (cleaned, _) = try await computeOffPool { try EchoMeasurement.cancel(near: near, far: far) }

        let end = min(offset + talker.count, cleaned.count)
        let user = EchoMeasurement.pcm(Array(other[offset..<end]))
        let kept = EchoMeasurement.laggedCorrelation(Array(cleaned[offset...]), user)
        #expect(kept.value >= 0.6, "the user's speech correlates only \(kept.value) with the cleaned capture")
        // And the echo-only stretch before the user talks is still cancelled.
        let erle = try #require(
            EchoMeasurement.erle(raw: Array(near[..<offset]), cleaned: Array(cleaned[..<offset]), fromSample: Self.rate))
        #expect(erle >= 15, "echo only \(erle) dB down before the double talk")
    }

    /// A loudspeaker's echo as a sink's monitor gives it (the reply itself, only delayed) with the user 8 dB
    /// under it: WebRTC's canceller alone keeps a quarter of the user's voiced 100 ms windows within 10 dB of
    /// what they said; with Speex's linear stage in front it keeps about 70 % (why the stage exists; it is off by
    /// default, see `linearStageMs`).
    @Test func `with the linear stage a user 8 dB under the echo keeps most of their speech in double talk`() async throws {
        let far = try AudioFileReader.readMono(path: TestAudio.pocketsphinxData + "/numbers.raw").samples
            + AudioFileReader.readMono(path: TestAudio.goForwardRaw).samples
        let talker = try AudioFileReader.readMono(path: TestAudio.goForwardRaw).samples
        let offset = 4 * Self.rate
        let gain = Float(0.4 * Self.rms(far[...]) / Self.rms(talker[...]))
        var user = [Float](repeating: 0, count: far.count)
        for i in 0..<min(talker.count, far.count - offset) { user[offset + i] = gain * Float(talker[i]) }
        let path = SyntheticEchoPath(delayMs: 100, gain: 1, reflectionMs: 0, reflectionGain: 0)
        let near = EchoBenchmark.nearEnd(far: far, path: path, plus: user)
        let (cleaned, _) = try await computeOffPool {
            try EchoMeasurement.cancel(near: near, far: far, options: EchoCancellerOptions(linearStageMs: 200))
        }
        let said = EchoMeasurement.pcm(user)
        let windows = stride(from: offset, to: min(offset + talker.count, cleaned.count) - 1600, by: 1600).filter {
            Self.rms(said[$0..<$0 + 1600]) >= 300
        }
        let kept = windows.filter { Self.rms(cleaned[$0..<$0 + 1600]) >= Self.rms(said[$0..<$0 + 1600]) / 3.16 }
        #expect(windows.count >= 10 && Double(kept.count) >= 0.6 * Double(windows.count), "\(kept.count) of \(windows.count) windows kept")
    }

    static func rms(_ samples: ArraySlice<Int16>) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))).squareRoot()
    }

    @Test func `a frame that is not whole 10 ms sub-frames is refused with a clear error`() throws {
        let canceller = try EchoCanceller()
        #expect(canceller.samplesPerSubFrame == 160)
        for count in [0, 100, 321] {
            let error = #expect(throws: EchoCancelError.self) { try canceller.process([Int16](repeating: 0, count: count)) }
            #expect(error == .badFrameSize(samples: count, sampleRate: 16_000))
            #expect(throws: EchoCancelError.badFrameSize(samples: count, sampleRate: 16_000)) {
                try canceller.analyzeReverse([Int16](repeating: 0, count: count))
            }
        }
        #expect(String(describing: EchoCancelError.badFrameSize(samples: 100, sampleRate: 16_000)).contains("160 samples"))
        // Whole frames of any length work: 10, 20 and 30 ms.
        for count in [160, 320, 480] { #expect(try canceller.process([Int16](repeating: 0, count: count)).count == count) }
    }

    @Test func `a rate or delay the library cannot run with is refused with a clear error`() async throws {
        #expect(throws: EchoCancelError.unsupportedRate(44_100)) { try EchoCanceller(options: .init(sampleRate: 44_100)) }
        #expect(throws: EchoCancelError.self) { try EchoCanceller(options: .init(streamDelayMs: 900)) }
        #expect(throws: EchoCancelError.self) { try EchoCanceller(options: .init(linearStageMs: 900)) }
        #expect(throws: EchoCancelError.self) { try EchoCanceller(options: .init(linearStageMs: -1)) }
        #expect(try EchoCanceller(options: .init(linearStageMs: 0)).process([Int16](repeating: 7, count: 320)).count == 320)
        // The capture path carries 16 kHz frames only: another rate fails at start, before the device starts.
        let capture = EchoCancellingCapture(
            FrameListCapture(frames: []), reference: EchoReference(), options: .init(sampleRate: 48_000), logger: logger)
        await #expect(throws: EchoCancelError.unsupportedRate(48_000)) { try await capture.start() }
        #expect(String(describing: EchoCancelError.unsupportedRate(44_100)).contains("44100 Hz"))
    }

    @Test func `every stage can be switched on`() throws {
        for ns in EchoCancellerOptions.NoiseSuppression.allCases {
            let canceller = try EchoCanceller(options: .init(highPassFilter: true, noiseSuppression: ns, gainControl: true))
            #expect(try canceller.process([Int16](repeating: 100, count: 320)).count == 320)
        }
    }

    /// A recorded capture replays to what the live one passed on only if a canceller's output depends on its
    /// input alone. WebRTC 0.3 keeps its fastest routines in process-wide pointers that creating a canceller
    /// first sets to the plain C ones (then back to SSE2): a canceller running meanwhile computed some frames
    /// with the other routines, and its output differed in the last bits from then on.
    @Test func `a canceller's output does not depend on others being created meanwhile`() async throws {
        let far = try Self.farSpeech()
        let near = EchoBenchmark.nearEnd(far: far, path: SyntheticEchoPath(delayMs: 80))
        let alone = try await computeOffPool { try EchoMeasurement.cancel(near: near, far: far).cleaned }
        let done = StopFlag()
        let creatingStarted = DispatchSemaphore(value: 0)
        let creating = Task {
            try await offPool {
                defer { creatingStarted.signal() }
                var created = 0
                while !done.isSet {
                    _ = try EchoCanceller()
                    created += 1
                    if created == 1 { creatingStarted.signal() }
                }
                return created
            }
        }
        let beside = try await computeOffPool {
            defer { done.set() }
            creatingStarted.wait()
            return try EchoMeasurement.cancel(near: near, far: far).cleaned
        }
        let created = try await creating.value
        let first = alone.indices.first { alone[$0] != beside[$0] }
        #expect(created > 1 && first == nil, "\(created) created meanwhile; output differs from sample \(first ?? -1)")
    }

    /// Drains a capture stream into one array of samples.
    static func collect(_ stream: AsyncStream<CaptureEvent>) async throws -> [Int16] {
        var samples: [Int16] = []
        for await event in stream {
            if case .frame(let frame) = event { samples += frame.samples }
            if event == .finished { break }
        }
        return samples
    }
}

/// Set once, read from any thread.
private final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
