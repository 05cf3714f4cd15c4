import AudioIO
import Foundation
import TalkLogging
import Testing

@testable import TalkSession

/// A user who cuts in over the reply reaches the transcription relay with the start of their first word: the held
/// utterance, released at the barge-in, sends the user's onset as the canceller's linear stage left it, not as the
/// stages after it took it down with the echo. Built at test time from pocketsphinx's "go forward ten meters" over the
/// echo of "numbers.raw": the frames carry, as the live canceller's do, what every stage left (the echo gone, the
/// user's first 100 ms 25 dB down and the echo before them muted, as replayed barge-ins show) and what the linear
/// stage alone left (the user whole, the echo as loud as them).
@Suite struct RelayReleaseOnsetTests {
    static let folder = "/usr/share/pocketsphinx/test/data"
    /// Where the user's first voiced sample lies in the capture stream (stream ms), and the gate's onset: its first
    /// loud frame, 40 ms later (the cleaned frames before it were taken down).
    static let userStartMs = 2_000
    static let gateOnsetMs = 2_040

    struct Capture {
        var cleaned: [Int16]
        var linear: [Int16]
        /// The clip alone, where it lies in the stream.
        var user: [Int16]
    }

    static func capture() throws -> Capture {
        let rate = AudioFrame.sampleRate
        let clip = try AudioFileReader.readMono(path: folder + "/goforward.raw").samples
        let reply = try AudioFileReader.readMono(path: folder + "/numbers.raw").samples
        let voiced = stride(from: 0, to: clip.count, by: 320).first { AudioLevel.rms(Array(clip[$0..<min(clip.count, $0 + 320)])) >= 300 } ?? 0
        let at = userStartMs * rate / 1000
        let total = (at + clip.count - voiced + rate) / AudioFrame.samplesPerFrame * AudioFrame.samplesPerFrame
        var user = [Int16](repeating: 0, count: total)
        for i in voiced..<clip.count where at + i - voiced < total { user[at + i - voiced] = clip[i] }
        let echoScale = AudioLevel.rms(Array(clip[voiced...])) / max(1, AudioLevel.rms(reply))
        let takenDown = at..<(at + rate / 10)
        var capture = Capture(cleaned: [], linear: [], user: user)
        for i in 0..<total {
            let echo = Double(reply[i % reply.count]) * echoScale
            capture.linear.append(Int16(clamping: Int((Double(user[i]) + echo).rounded())))
            let kept = takenDown.contains(i) ? Double(user[i]) * 0.056 : (i < at ? echo * 0.01 : Double(user[i]))
            capture.cleaned.append(Int16(clamping: Int(kept.rounded())))
        }
        return capture
    }

    /// What the relay gets of an utterance held from `openedMs`, released at `releasedAtMs` from `onsetMs`, through
    /// `throughMs` at least (the encoder sends whole chunks), laid in the stream's place.
    static func relayed(_ capture: Capture, openedMs: Int, onsetMs: Int, releasedAtMs: Int, throughMs: Int) async throws -> [Int16] {
        let (frames, stream) = AsyncStream.makeStream(of: AudioFrame.self)
        let relay = RelayTranscriptionHoldTests.FakeRelay()
        let source = RelayTranscription(client: relay, frames: frames, logger: Logger(label: "relay-onset-test", handler: InMemoryLogHandler()))
        let n = AudioFrame.samplesPerFrame
        let count = capture.cleaned.count / n
        for i in 0..<count {
            var frame = AudioFrame(sequence: UInt64(i), captureTimeNs: UInt64(i) * 20_000_000, samples: Array(capture.cleaned[i * n..<(i + 1) * n]))
            frame.linearSamples = Array(capture.linear[i * n..<(i + 1) * n])
            stream.yield(frame)
            let endMs = (i + 1) * AudioFrame.durationMs
            if endMs == openedMs + 200 || endMs == releasedAtMs {
                try await RelayTranscriptionHoldTests.Harness.eventually { await source.heardThroughMs >= endMs }
                if endMs == releasedAtMs {
                    await source.utteranceReleased(onsetMs: onsetMs)
                } else {
                    await source.utteranceStarted(positionMs: openedMs, held: true)
                }
            }
        }
        let from = onsetMs - RelayTranscription.Settings().release.marginMs
        try await RelayTranscriptionHoldTests.Harness.eventually { await relay.samples.count >= (throughMs - from) * n / AudioFrame.durationMs }
        let sent = await relay.samples
        await source.stop()
        return [Int16](repeating: 0, count: from * n / AudioFrame.durationMs) + sent
    }

    /// dB of `a` against `b`.
    static func decibels(_ a: [Int16], over b: [Int16]) -> Double { 20 * log10(max(1e-3, AudioLevel.rms(a)) / max(1e-3, AudioLevel.rms(b))) }

    @Test func `a barge-in's utterance reaches the relay with the start of the user's first word`() async throws {
        let capture = try Self.capture()
        // Opened on the echo 200 ms before the user; the barge-in 420 ms after their start.
        let sent = try await Self.relayed(capture, openedMs: Self.userStartMs - 200, onsetMs: Self.gateOnsetMs, releasedAtMs: Self.userStartMs + 420,
                                          throughMs: Self.userStartMs + 100)
        let first100 = Self.userStartMs * 16..<(Self.userStartMs + 100) * 16
        let level = Self.decibels(Array(sent[first100]), over: Array(capture.user[first100]))
        // Whole, with the echo the linear stage left about as loud beside it (up to +3 dB); taken down, -25 dB.
        #expect(level >= -6, "the user's first 100 ms reach the relay \(String(format: "%.1f", level)) dB from how they spoke")
    }

    /// The stretch of onsets that ends with the user's can begin on the reply's echo (an onset of it within 750 ms
    /// before theirs): released from there, the audio before the user goes out as every stage left it, with no echo
    /// of the linear stage's in front of their words.
    @Test func `released from an onset long before the barge-in, the echo before the user goes out as cleaned`() async throws {
        let capture = try Self.capture()
        let echoOnsetMs = Self.userStartMs - 700
        let sent = try await Self.relayed(capture, openedMs: echoOnsetMs - 100, onsetMs: echoOnsetMs, releasedAtMs: Self.userStartMs + 420,
                                          throughMs: Self.userStartMs)
        let beforeUser = (echoOnsetMs - 200) * 16..<Self.userStartMs * 16
        let asCleaned = Array(sent[beforeUser]) == Array(capture.cleaned[beforeUser])
        let over = Self.decibels(Array(sent[beforeUser]), over: Array(capture.cleaned[beforeUser]))
        #expect(asCleaned, "the echo before the user went out \(String(format: "%.1f", over)) dB over every stage's output")
    }
}
