import Foundation
import Testing
import TalkLogging
import TalkTestSupport

@testable import AudioIO

/// A playback underrun puts a gap in what the speaker plays; the playback side reports it on the echo reference
/// (`EchoReference.playbackHadGap`) and the cancelling capture puts the reference back on the echo's converged lag.
@Suite struct PlaybackGapTests {
    static let rate = AudioFrame.sampleRate

    /// Hands its frames over one at a time as they are asked for, and reports a playback gap on `reference` just
    /// before frame `gapFrame`, as the sound server's underrun callback would while that frame is captured.
    actor GapReportingCapture: AudioCaptureDevice {
        private let frames: [AudioFrame]
        private let gapFrame: Int?
        private let reference: EchoReference
        private var next = 0

        init(samples: [Int16], firstSampleNs: UInt64, gapFrame: Int?, reference: EchoReference) {
            let n = AudioFrame.samplesPerFrame
            frames = stride(from: 0, to: samples.count - n + 1, by: n).enumerated().map { index, start in
                AudioFrame(
                    sequence: UInt64(index), captureTimeNs: firstSampleNs + UInt64(start + n - 1) * 62_500,
                    samples: Array(samples[start..<start + n]))
            }
            self.gapFrame = gapFrame
            self.reference = reference
        }

        func start() async throws -> AsyncStream<CaptureEvent> {
            AsyncStream(unfolding: { await self.nextEvent() })
        }

        private func nextEvent() -> CaptureEvent? {
            defer { next += 1 }
            if next == gapFrame { reference.playbackHadGap() }
            if next < frames.count { return .frame(frames[next]) }
            return next == frames.count ? .finished : nil
        }

        func stop() async {}
    }

    /// Two plays of 6.8 s of speech; 7.8 s in, the speaker's sound gets a 2.5 ms gap (40 samples) the reference does
    /// not have, as a stream placed again after an underrun by a jittery estimate leaves it (the echo path: 80 ms,
    /// low-passed, with a reflection). Returns the ERLE (dB) of what the capture passes on from 1.5 s to 5 s after
    /// the gap.
    static func erleAfterGap(reported: Bool) async throws -> Double {
        let speech = try EchoCancellerTests.farSpeech()
        let far = [Int16](repeating: 0, count: rate) + speech + speech
        let gap = (rate + speech.count) / AudioFrame.samplesPerFrame * AudioFrame.samplesPerFrame
        let played = Array(far[..<gap]) + [Int16](repeating: 0, count: 40) + Array(far[gap..<(far.count - 40)])
        let near = EchoBenchmark.nearEnd(far: played, path: SyntheticEchoPath(delayMs: 80))
        let logger = Logger(label: "test.aec.gap", handler: InMemoryLogHandler())
        let t0: UInt64 = 5_000_000_000
        let playback = EchoReferencePlayback(SilentPlayback(), now: { t0 }, logger: logger)
        #expect(try await playback.play(PCMBuffer(sampleRate: rate, samples: far)) == .completed)
        let device = GapReportingCapture(
            samples: near, firstSampleNs: t0, gapFrame: reported ? gap / AudioFrame.samplesPerFrame : nil, reference: playback.reference)
        let capture = EchoCancellingCapture(device, reference: playback.reference, logger: logger)
        // The capture's stream keeps the newest 500 frames for a reader that falls behind: frames are matched by
        // their sequence numbers, and the measurement takes those the reader got.
        var raw: [Int16] = [], cleaned: [Int16] = []
        let n = AudioFrame.samplesPerFrame
        for await event in try await capture.start() {
            if case .frame(let frame) = event, (gap + 3 * rate / 2..<gap + 5 * rate).contains(Int(frame.sequence) * n) {
                raw += near[Int(frame.sequence) * n..<Int(frame.sequence + 1) * n]
                cleaned += frame.samples
            }
            if event == .finished { break }
        }
        await capture.stop()
        try #require(raw.count >= 2 * rate, "only \(raw.count) samples measured")
        return try #require(EchoMeasurement.erle(raw: raw, cleaned: cleaned))
    }

    /// Seen on PipeWire under load: after one underrun the echo was cancelled 15 to 32 dB for 5 s, 47 to 62 before
    /// and after, the converged filters a few samples off the echo (with the gap unreported here: 22 dB, the rest of
    /// the echo passed on to the recogniser).
    @Test func `after a reported playback gap the echo is cancelled by 40 dB again within 1.5 s`() async throws {
        let erle = try await Self.erleAfterGap(reported: true)
        #expect(erle >= 40, "echo only \(erle) dB below the raw capture from 1.5 to 5 s after the gap")
    }

    /// After a reported gap the echo may sit off its reference until the placement settles: the frames of the
    /// settling window (800 ms) say so to barge-in (`AudioFrame.echoSettling`), and the recording holds the report at
    /// the frame it came before, so a replay knows it too.
    @Test func `the frames after a reported gap are marked settling, and the recording holds the gap`() async throws {
        let speech = try EchoCancellerTests.farSpeech()
        let far = [Int16](repeating: 0, count: Self.rate) + speech
        let near = EchoBenchmark.nearEnd(far: far, path: SyntheticEchoPath(delayMs: 80))
        let logger = Logger(label: "test.aec.gap", handler: InMemoryLogHandler())
        let t0: UInt64 = 5_000_000_000
        let playback = EchoReferencePlayback(SilentPlayback(), now: { t0 }, logger: logger)
        #expect(try await playback.play(PCMBuffer(sampleRate: Self.rate, samples: far)) == .completed)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aec-gap-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let gapFrame = 150
        let device = GapReportingCapture(samples: near, firstSampleNs: t0, gapFrame: gapFrame, reference: playback.reference)
        let capture = EchoCancellingCapture(device, reference: playback.reference, recordTo: folder, logger: logger)
        var settling: [UInt64] = []
        var frames = 0
        for await event in try await capture.start() {
            if case .frame(let frame) = event {
                frames += 1
                if frame.echoSettling { settling.append(frame.sequence) }
            }
            if event == .finished { break }
        }
        await capture.stop()
        try #require(frames > gapFrame + 100)
        let recording = try EchoCaptureRecording(folder: folder)
        // From the gap's frame for 40 frames, and from any move of the aligner's.
        let expected = EchoSettlingWindow.frames(recording.frames) { $0 == gapFrame || recording.movedFrames.contains($0) }
        #expect(Set(UInt64(gapFrame)..<UInt64(gapFrame + 40)).isSubset(of: settling))
        #expect(settling == expected.indices.filter { expected[$0] }.map(UInt64.init))
        #expect(recording.gapsRecorded && recording.gaps.indices.filter { recording.gaps[$0] } == [gapFrame])
    }
}
