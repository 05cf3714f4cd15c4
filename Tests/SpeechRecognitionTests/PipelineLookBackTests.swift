import AudioIO
import Foundation
import TalkLogging
import Testing

@testable import SpeechRecognition

/// Remembers every sample each utterance was fed, in order.
private actor HearingRecognizer: SpeechRecognizer {
    var heard: [[Int16]] = []
    var open = false

    func startUtterance() throws {
        heard.append([])
        open = true
    }

    func process(_ samples: [Int16]) throws -> Bool? {
        heard[heard.count - 1] += samples
        return nil
    }

    func partial() -> Hypothesis? { nil }

    func endUtterance() throws -> Hypothesis {
        open = false
        return Hypothesis(text: "")
    }

    func reset() { open = false }
    func decodeCPUSeconds() -> Double { 0 }
    func useGrammar(_ jsgf: String?) throws {}
}

private let logger = Logger(label: "test.pipeline.lookback")

/// A user who starts over the reply loses their first syllable to the echo stages (WebRTC and the residual suppressor
/// take it down with the echo, to -35..-55 dB) while the linear stage keeps it; the endpointer hears those frames as
/// silence and starts the utterance after them. The frames carry the linear stage's output (`onsetAlternative`), and
/// the utterance's pre-roll hands it to the recogniser: the user's first syllable at its level, not at the muted one.
@Suite struct PipelineLookBackTests {
    /// 500 ms quiet, then `turnedDown` frames muted to -70 dBFS that carry the user's onset at -20 dBFS as their
    /// alternative, then the user at -20 dBFS for a second, then a second of quiet.
    static func frames(turnedDown: Int) -> [AudioFrame] {
        let quiet = SpeechTestAudio.frames(SpeechTestAudio.noise(ms: 500, dbfs: -70))
        let onset = SpeechTestAudio.noise(ms: turnedDown * AudioFrame.durationMs, dbfs: -20, seed: 7)
        let muted = SpeechTestAudio.frames(SpeechTestAudio.noise(ms: turnedDown * AudioFrame.durationMs, dbfs: -70, seed: 3))
        let user = SpeechTestAudio.frames(SpeechTestAudio.noise(ms: 1000, dbfs: -20, seed: 9) + SpeechTestAudio.noise(ms: 1000, dbfs: -70))
        var all = quiet
        for (k, var frame) in muted.enumerated() {
            let n = AudioFrame.samplesPerFrame
            frame.onsetAlternative = Array(onset[k * n..<(k + 1) * n])
            all.append(frame)
        }
        all += user
        for i in all.indices { all[i].sequence = UInt64(i) }
        return all
    }

    /// The level (dBFS) of each 20 ms frame the first utterance's recogniser heard.
    static func heardLevels(_ frames: [AudioFrame], ahead: Bool) async throws -> [Double] {
        let capture = ScriptedCapture()
        let recognizer = HearingRecognizer()
        let pipeline = try UtterancePipeline(capture: capture, recognizer: recognizer, timing: .wallClock, logger: logger)
        let events = try await pipeline.start()
        await pipeline.decodeWhileStarting(ahead)
        for frame in frames { await capture.send(.frame(frame)) }
        await capture.stop()
        for await _ in events {}
        let heard = try #require(await recognizer.heard.first)
        let n = AudioFrame.samplesPerFrame
        return stride(from: 0, to: heard.count - n + 1, by: n).map { AudioLevel.dbfsWithoutOffset(Array(heard[$0..<$0 + n])) }
    }

    @Test(arguments: [false, true])
    func `the user's first syllable that the echo stages turned down reaches the recogniser at its level`(ahead: Bool) async throws {
        let levels = try await Self.heardLevels(Self.frames(turnedDown: 3), ahead: ahead)
        // The pre-roll is 400 ms (20 frames) before the first voiced frame: its last 3 are the user's onset.
        try #require(levels.count > 24)
        let onset = levels[17..<20]
        #expect(onset.allSatisfy { $0 > -23 }, "the onset was heard at \(onset.map { Int($0) }) dBFS")
        #expect(levels[..<17].allSatisfy { $0 < -60 }, "the quiet before it stays quiet")
    }

    @Test func `at most 200 ms are looked back over, and only frames that carry an alternative`() async throws {
        let levels = try await Self.heardLevels(Self.frames(turnedDown: 15), ahead: false)
        try #require(levels.count > 24)
        #expect(levels[10..<20].allSatisfy { $0 > -23 }, "\(levels[10..<20].map { Int($0) })")
        #expect(levels[..<10].allSatisfy { $0 < -60 }, "\(levels[..<10].map { Int($0) })")
    }
}
