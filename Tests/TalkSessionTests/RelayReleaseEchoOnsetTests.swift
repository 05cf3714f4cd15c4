import AudioIO
import Foundation
import TalkLogging
import Testing

@testable import TalkSession

/// The reply's echo can make a sound onset within 750 ms before the user's (`TurnTaking.onsetStretchGapMs`), so the
/// stretch of onsets that ends with the user's begins on the echo. The canceller's echo share tells them apart: every
/// audible frame after the echo's onset is the reply's own sound, the user's frames are not. A barge-in's release
/// starts at the user's onset then, and the echo before them does not reach the relay in front of their words.
@Suite struct RelayReleaseEchoOnsetTests {
    static let userStartMs = RelayReleaseOnsetTests.userStartMs
    static let gateOnsetMs = RelayReleaseOnsetTests.gateOnsetMs
    /// The echo's onset, 500 ms before the user's: an echo syllable the stages passed.
    static let echoOnsetMs = userStartMs - 500

    /// The frames as the canceller passes them: an echo syllable from its onset, explained whole by the reply, then
    /// the user (their first 100 ms taken down), whose frames the reply explains little.
    static func frames() throws -> [AudioFrame] {
        let capture = try RelayReleaseOnsetTests.capture()
        let n = AudioFrame.samplesPerFrame
        return (0..<capture.cleaned.count / n).map { i in
            let ms = i * AudioFrame.durationMs
            var samples = Array(capture.cleaned[i * n..<(i + 1) * n])
            if ms >= echoOnsetMs, ms < echoOnsetMs + 200 {
                // An echo syllable the stages passed: 200 ms at RMS about 1,000.
                samples = (0..<n).map { k in Int16(1_400 * sin(2 * Double.pi * 300 * Double(i * n + k) / Double(AudioFrame.sampleRate))) }
            }
            var frame = AudioFrame(sequence: UInt64(i), captureTimeNs: UInt64(i) * 20_000_000, samples: samples)
            frame.linearSamples = Array(capture.linear[i * n..<(i + 1) * n])
            frame.echoExplained = ms < userStartMs ? 1 : 0.2
            frame.echoExplainedClosely = ms < userStartMs ? 1 : 0.05
            return frame
        }
    }

    @Test func `a barge-in's release starts at the user's onset, not an echo onset just before it`() async throws {
        let frames = try Self.frames()
        let (stream, input) = AsyncStream.makeStream(of: AudioFrame.self)
        let relay = RelayTranscriptionHoldTests.FakeRelay()
        let source = RelayTranscription(client: relay, frames: stream, logger: Logger(label: "relay-echo-onset-test", handler: InMemoryLogHandler()))
        let releasedAtMs = Self.userStartMs + 420
        for frame in frames {
            input.yield(frame)
            let endMs = frame.streamPositionMs + AudioFrame.durationMs
            if endMs == Self.echoOnsetMs + 200 {
                try await RelayTranscriptionHoldTests.Harness.eventually { await source.heardThroughMs >= endMs }
                await source.utteranceStarted(positionMs: Self.echoOnsetMs, held: true)
            }
            if endMs == releasedAtMs {
                try await RelayTranscriptionHoldTests.Harness.eventually { await source.heardThroughMs >= endMs }
                // As the loop calls it: through the protocol.
                let loop: any TranscriptSource = source
                await loop.utteranceReleased(stretchMs: [Self.echoOnsetMs, Self.gateOnsetMs])
            }
        }
        let n = AudioFrame.samplesPerFrame
        try await RelayTranscriptionHoldTests.Harness.eventually { await relay.samples.count >= (releasedAtMs - Self.gateOnsetMs) * n / AudioFrame.durationMs }
        let sent = await relay.samples
        await source.stop()
        // The relay's audio in frames, as sent (PCM16: each frame's samples arrive as they went).
        let chunks = stride(from: 0, to: sent.count - n + 1, by: n).map { Array(sent[$0..<$0 + n]) }
        let echoFrames = frames.filter { $0.streamPositionMs >= Self.echoOnsetMs && $0.streamPositionMs < Self.echoOnsetMs + 200 }
        let echoSent = echoFrames.filter { chunks.contains($0.samples) }.count
        #expect(echoSent == 0, "\(echoSent) frames of the echo's syllable reached the relay in front of the user's words")
        let userFirst = frames.first { $0.streamPositionMs == Self.userStartMs }!.linearSamples!
        #expect(chunks.contains(userFirst), "the user's first frame did not reach the relay")
    }

    @Test func `the user's onset skips the stretch's leading echo onsets, never its latest`() {
        let onsets = [1_000, 3_000, 3_500, 4_000, 4_300]
        #expect(TurnTaking.userOnsetMs(of: onsets) == 3_000)
        #expect(TurnTaking.userOnsetMs(of: onsets) { $0 < 4_000 } == 4_000)
        #expect(TurnTaking.userOnsetMs(of: onsets) { _ in true } == 4_300)
        #expect(TurnTaking.userOnsetMs(of: onsets) { $0 == 3_500 } == 3_000, "an echo onset after the user's first is no reason to skip theirs")
    }

    @Test func `an onset is the echo's only if the reply explains every audible frame of its first 200 ms`() throws {
        let frames = try Self.frames()
        #expect(HeldUtteranceRelease.heardAsEcho(onsetMs: Self.echoOnsetMs, frames: frames))
        #expect(!HeldUtteranceRelease.heardAsEcho(onsetMs: Self.gateOnsetMs, frames: frames))
        // An onset whose first 200 ms end in the user's own audible frames is theirs, whatever came before them.
        #expect(!HeldUtteranceRelease.heardAsEcho(onsetMs: Self.userStartMs - 60, frames: frames))
        #expect(!HeldUtteranceRelease.heardAsEcho(onsetMs: Self.echoOnsetMs, frames: []), "no frames heard says nothing of the echo")
    }
}
