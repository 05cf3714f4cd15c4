import AudioIO
import Foundation
import TalkLogging
import TalkTestSupport
import Testing

@testable import SpeechRecognition

/// `UtterancePipeline.decodeAgain` with the dictation model: after a barge-in the final is the user's words as they
/// said them, decoded again from their onset.
@Suite(.offPool) struct PipelineDecodeAgainTests {
    /// The noise floor under everything, and the pause between the echo's last word and the user's first (shorter
    /// than the endpointer's silence window, so one utterance holds both).
    static let floorDbfs = -60.0
    static let pauseMs = 250

    /// The capture of a barge-in: `echo` (the reply's last words, which opened the utterance), a pause, then the
    /// user's "go forward ten meters" from `onsetMs`, its first `damagedMs` taken 40 dB down in the cleaned frames as
    /// the echo stages take a user's onset down, the linear stage's output keeping it whole.
    static func capture(echo: [Int16], damagedMs: Int) throws -> (frames: [AudioFrame], onsetMs: Int) {
        let user = try SpeechTestAudio.speech(SpeechTestAudio.goForward)
        let lead = SpeechTestAudio.noise(ms: 600, dbfs: floorDbfs, seed: 1)
        var linear = lead + echo + [Int16](repeating: 0, count: pauseMs * 16)
        // On a frame boundary, so the onset is a frame's start.
        linear += [Int16](repeating: 0, count: (320 - linear.count % 320) % 320)
        let onsetMs = linear.count / 16
        linear += user + [Int16](repeating: 0, count: 1_500 * 16)
        linear = SpeechTestAudio.mix(linear, SpeechTestAudio.noise(ms: linear.count / 16, dbfs: floorDbfs, seed: 2))
        var cleaned = linear
        let damaged = onsetMs * 16..<min(cleaned.count, (onsetMs + damagedMs) * 16)
        for i in damaged { cleaned[i] = Int16((Double(cleaned[i]) * 0.01).rounded()) }
        let frames = zip(SpeechTestAudio.frames(cleaned), SpeechTestAudio.frames(linear)).map { cleanedFrame, linearFrame in
            var frame = cleanedFrame
            frame.linearSamples = linearFrame.samples
            return frame
        }
        return (frames, onsetMs)
    }

    /// Runs the frames through a pipeline on the dictation model. With `decodeAgain`, once the utterance has started
    /// and the recogniser has a partial 400 ms past the user's onset, the pipeline decodes it again as a barge-in's
    /// release would send it: from 200 ms before the onset, the linear stage's output from 60 ms before it to 300 ms
    /// after. Returns the final's words.
    static func final(_ capture: (frames: [AudioFrame], onsetMs: Int), decodeAgain: Bool) async throws -> String {
        let recognizer = try await TestAudio.recognizer(.dictation())
        let device = ScriptedCapture()
        let pipeline = try UtterancePipeline(capture: device, recognizer: recognizer, timing: .streamTime, logger: TestAudio.logger)
        let events = try await pipeline.start()
        await pipeline.reportPartials(everyFrames: 1)
        let onset = capture.onsetMs
        // Everything but the trailing silence that ends the utterance: it is still open when decoded again.
        let speechEnd = capture.frames.count - 1_200 / AudioFrame.durationMs
        for frame in capture.frames[..<speechEnd] { await device.send(.frame(frame)) }
        var started = false
        var asked = !decodeAgain
        for await event in events {
            switch event {
            case .speechStarted: started = true
            case .partial(_, let endMs?) where started && !asked && endMs >= onset + 400:
                asked = true
                let linear = onset - 60..<onset + 300
                await pipeline.decodeAgain(fromMs: onset - 200) { frame in
                    linear.contains(frame.streamPositionMs) ? frame.linearSamples ?? frame.samples : frame.samples
                }
                for frame in capture.frames[speechEnd...] { await device.send(.frame(frame)) }
                await device.send(.finished)
            case .final(let result):
                await pipeline.stop()
                return result.hypothesis.text
            default: break
            }
            if !decodeAgain, case .speechStarted = event {
                for frame in capture.frames[speechEnd...] { await device.send(.frame(frame)) }
                await device.send(.finished)
            }
        }
        Issue.record("no final")
        return ""
    }

    @Test func `an utterance that opened on the reply's echo yields the user's words alone once decoded again from their onset`() async throws {
        // The reply's last words in front of the user's: "he might even".
        let echo = Array(try SpeechTestAudio.speech(SpeechTestAudio.librivox0930).prefix(16 * 1_300))
        let capture = try Self.capture(echo: echo, damagedMs: 0)
        let live = try await Self.final(capture, decodeAgain: false)
        let again = try await Self.final(capture, decodeAgain: true)
        // The live decode has the echo's words in front (what the user's words were sent with before).
        #expect(!live.hasPrefix("go"), "live: \(live)")
        #expect(again == "go forward ten meters", "live: \(live)")
    }

    @Test func `a user's first word the echo stages took down is heard when decoded again with the linear stage's onset`() async throws {
        // No echo words: the utterance opens on the user's damaged onset or after it.
        let capture = try Self.capture(echo: [], damagedMs: 300)
        let live = try await Self.final(capture, decodeAgain: false)
        let again = try await Self.final(capture, decodeAgain: true)
        #expect(!live.hasPrefix("go"), "live: \(live)")
        #expect(again.hasPrefix("go forward"), "live: \(live), again: \(again)")
    }
}
