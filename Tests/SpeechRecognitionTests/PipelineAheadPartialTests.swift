import AudioIO
import Foundation
import TalkLogging
import Testing

@testable import SpeechRecognition

/// A grammar search as PocketSphinx's goes over a user's "go forward" said over the reply: its partial names the words
/// for how much audio (20 ms frames) the utterance has had, and drops a word in the pause after it until the next one
/// confirms it.
private actor PausingWordRecognizer: SpeechRecognizer {
    /// From this many frames heard on, this partial (empty: none), in order.
    let script: [(fromFrames: Int, text: String)]
    private var samples = 0
    private var open = false

    init(script: [(fromFrames: Int, text: String)]) {
        self.script = script
    }

    func startUtterance() throws {
        samples = 0
        open = true
    }

    func process(_ samples: [Int16]) throws -> Bool? {
        self.samples += samples.count
        return nil
    }

    func partial() -> Hypothesis? {
        guard open, let text = script.last(where: { samples / AudioFrame.samplesPerFrame >= $0.fromFrames })?.text, !text.isEmpty
        else { return nil }
        return Hypothesis(text: text)
    }

    func endUtterance() throws -> Hypothesis {
        open = false
        return Hypothesis(text: script.last?.text ?? "")
    }

    func reset() { open = false }
    func decodeCPUSeconds() -> Double { 0 }
    func useGrammar(_ jsgf: String?) throws {}
}

@Suite struct PipelineAheadPartialTests {
    /// Decoding ahead (over a reply lowered for the user), the recogniser has "go" before the endpointer confirms the
    /// start and drops it in the pause before "forward": the start reports the word heard ahead, not nothing until
    /// "go forward" 360 ms later (the timeline of a PipeWire loopback recording replayed through the pipeline and
    /// PocketSphinx, where barge-in waited for that partial).
    @Test func `a word the recogniser heard ahead of the start and dropped in the pause after it is the start's partial`() async throws {
        // The pre-roll (20 frames) and the start window (13) are decoded ahead: "go" from the 26th frame to the 31st,
        // nothing from there to the 50th.
        let recognizer = PausingWordRecognizer(script: [(0, ""), (26, "go"), (31, ""), (50, "go forward")])
        let capture = ScriptedCapture()
        let pipeline = try UtterancePipeline(capture: capture, recognizer: recognizer, timing: .wallClock, logger: Logger(label: "test"))
        let events = try await pipeline.start()
        await pipeline.reportPartials(everyFrames: 2)
        await pipeline.decodeWhileStarting(true)
        let audio = SpeechTestAudio.noise(ms: 500, dbfs: -70) + SpeechTestAudio.noise(ms: 1500, dbfs: -20)
            + SpeechTestAudio.noise(ms: 1000, dbfs: -70)
        for frame in SpeechTestAudio.frames(audio) { await capture.send(.frame(frame)) }
        await capture.stop()
        var seen: [String] = []
        for await event in events {
            switch event {
            case .speechStarted(let ms): seen.append("start \(ms)")
            case .partial(let text, let endMs): seen.append("\(text) \(endMs ?? -1)")
            default: break
            }
        }
        // The start comes on the 33rd frame heard (its 13th loud one, 500 + 260 ms in), and "go" with it.
        #expect(seen.prefix(3) == ["start 500", "go 760", "go forward 1120"], "\(seen)")
    }
}
