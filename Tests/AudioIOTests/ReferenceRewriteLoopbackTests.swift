import AudioIO
import Foundation
import Synchronization
import Testing
import TalkLogging
import TalkTestSupport

/// A sound the server already holds, written again (a sound handed to an idling stream over its queued silence, a
/// level change over the sound it holds), must reach the echo reference before the canceller has read that stretch:
/// the canceller reads each frame's reference as the frame comes in, and never again. Placed after, the canceller
/// met the sound's first words with silence (or the level before the change) on its reference and took their echo
/// for the user. On PipeWire the echo arrives about 110 ms after where the reference places it, so a rewrite a few
/// milliseconds after the server's read position landed in a stretch the canceller had already read.
@Suite(.serialized) struct ReferenceRewriteLoopbackTests {
    let logger = Logger(label: "test.rewrite", handler: InMemoryLogHandler())

    /// The reference each captured frame was read against as it came in, as `EchoCancellingCapture` reads it
    /// (`EchoTuning.Placement.cursorLeadNs`, 20 ms, ahead of the frame's own time), and where that stretch starts.
    final class LiveReads: Sendable {
        let reads = Mutex<[(startNs: UInt64, samples: [Int16])]>([])

        func consume(_ stream: AsyncStream<CaptureEvent>, reference: EchoReference) {
            Task(executorPreference: OffPoolExecutor()) { [self] in
                for await event in stream {
                    guard case .frame(let frame) = event else { continue }
                    let span = UInt64(frame.samples.count) * 62_500
                    let start = frame.captureTimeNs + 62_500 + 20_000_000 - span
                    let far = reference.samples(from: start, count: frame.samples.count)
                    reads.withLock { $0.append((start, far)) }
                }
            }
        }
    }

    static func rms(_ samples: ArraySlice<Int16>) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))).squareRoot()
    }

    @Test func `a sound handed to an idle stream, then lowered, is on the echo reference before the canceller reads it`() async throws {
        try await PulseTestServer.with { server in
            let capture = PulseCapture(source: "vsink.monitor", server: server.address, logger: logger)
            let reference = EchoReference(historySeconds: 60)
            let live = LiveReads()
            live.consume(try await capture.start(), reference: reference)
            try await server.settleNullSink()
            let playback = try PulsePlayback(server: server.address, echoReference: reference, logger: logger)
            try await Task.sleep(for: .milliseconds(500))

            // A sentence, a short pause (the stream idles on queued silence), the next sentence handed over to it,
            // lowered halfway as the Talk loop lowers a reply the user may be cutting in on.
            // Three such pauses: whether a sound's start lands in what the canceller has read depends on where the
            // server's read position and the capture's reads fall, which each handover samples once.
            let noise = PlaybackGainLoopbackTests.noise(seconds: 1, amplitude: 0.3)
            #expect(try await playback.play(noise) == .completed)
            let handedNs = monotonicNanoseconds()
            for _ in 0..<3 {
                try await Task.sleep(for: .milliseconds(300))
                let next = Task { try await playback.play(PlaybackGainLoopbackTests.noise(seconds: 1.2, amplitude: 0.3)) }
                try await Task.sleep(for: .milliseconds(600))
                await playback.setGain(0.18)
                #expect(try await next.value == .completed)
                await playback.setGain(1)
            }
            let endedNs = monotonicNanoseconds()
            // Read on until the frames' reads have passed the sound's end.
            let deadline = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < deadline, (live.reads.withLock { $0.last?.startNs } ?? 0) < endedNs + 300_000_000 {
                try await Task.sleep(for: .milliseconds(20))
            }
            await capture.stop()
            await playback.close()

            // Each read of the handed-over sound against the reference as finally placed: every 20 ms read that the
            // final reference has sound in must have held that sound at its level (within 6 dB), not silence or the
            // level before the change. (A new stream's first sound is placed by its first timing report, which comes
            // with its first sound already playing: its start is not known before, and is not what this is about.)
            let reads = live.reads.withLock { $0 }.filter { $0.startNs >= handedNs }
            var voiced = 0
            var off: [String] = []
            for read in reads {
                let final = reference.samples(from: read.startNs, count: read.samples.count)
                let level = Self.rms(final[...])
                guard level > 300 else { continue }
                voiced += 1
                let ratio = Self.rms(read.samples[...]) / level
                if ratio < 0.5 || ratio > 2 {
                    off.append("\((Int64(read.startNs) - Int64(endedNs)) / 1_000_000) ms: \(Int(20 * log10(max(ratio, 0.001)))) dB")
                }
            }
            #expect(voiced > 120, "the reference held sound in only \(voiced) of the frames' reads")
            #expect(off.isEmpty, "frames read a reference that was placed or scaled only after they read it (ms before the end, read against final): \(off.prefix(12))")
        }
    }
}
