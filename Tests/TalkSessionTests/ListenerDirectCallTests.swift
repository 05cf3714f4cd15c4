import AudioIO
import SpeechRecognition
import TalkLogging
import Testing

@testable import TalkSession

/// `UtterancePipeline` asked directly, as its own type, from code that sees TalkSession (which makes it a
/// `TalkListener`): each request does what the pipeline's own method does. Were the protocol to give a default for a
/// requirement, an async one, a caller in an async context would get that default over the pipeline's synchronous
/// method, silently (only the session's calls through the protocol reach the pipeline's).
@Suite struct ListenerDirectCallTests {
    /// Stands in for an engine: the samples each utterance was fed; its partials name how many.
    actor HeardRecognizer: SpeechRecognizer {
        private(set) var samplesPerUtterance: [Int] = []

        func startUtterance() { samplesPerUtterance.append(0) }
        func process(_ samples: [Int16]) -> Bool? {
            samplesPerUtterance[samplesPerUtterance.count - 1] += samples.count
            return nil
        }
        func partial() -> Hypothesis? { Hypothesis(text: "heard \(samplesPerUtterance.last ?? 0)") }
        func endUtterance() -> Hypothesis { Hypothesis(text: "utterance \(samplesPerUtterance.count)") }
        func reset() {}
        func useGrammar(_ jsgf: String?) {}
        func decodeCPUSeconds() -> Double { 0 }
    }

    /// Quiet frames (about −70 dBFS: the noise floor) and loud ones (about −20 dBFS: voice to the endpointer).
    static let quiet: Int16 = 10
    static let loud: Int16 = 3_000

    /// A pipeline on a microphone the test pushes frames into, at stream time (frame n at n × 20 ms).
    static func pipeline() throws -> (UtterancePipeline, FakeMicrophone, HeardRecognizer) {
        let microphone = FakeMicrophone()
        let recognizer = HeardRecognizer()
        let pipeline = try UtterancePipeline(capture: microphone, recognizer: recognizer, timing: .streamTime, logger: .init(label: "test"))
        return (pipeline, microphone, recognizer)
    }

    /// Pushes `frames` (level, count) in order, then ends the capture; returns every event of the run.
    static func run(_ pipeline: UtterancePipeline, _ microphone: FakeMicrophone, _ frames: [(Int16, Int)]) async throws -> [UtteranceEvent] {
        let events = try await pipeline.start()
        for (level, count) in frames { await microphone.push(amplitude: level, count: count) }
        await microphone.stop()
        var seen: [UtteranceEvent] = []
        for await event in events { seen.append(event) }
        return seen
    }

    @Test func `partials asked every frame come every frame`() async throws {
        let (pipeline, microphone, _) = try Self.pipeline()
        await pipeline.reportPartials(everyFrames: 1)
        let seen = try await Self.run(pipeline, microphone, [(Self.quiet, 25), (Self.loud, 50)])
        let ends = seen.compactMap { if case .partial(_, let endMs?) = $0 { endMs } else { nil } }
        let gaps = Set(zip(ends.dropFirst(), ends).map { $0 - $1 })
        // The pipeline's own cadence is every 5 frames (100 ms).
        #expect(ends.count >= 20 && gaps == [AudioFrame.durationMs], "partials ending at \(ends)")
    }

    @Test func `asked to decode while starting, the recogniser hears a start the endpointer has not called`() async throws {
        let (pipeline, microphone, recognizer) = try Self.pipeline()
        await pipeline.decodeWhileStarting(true)
        // 200 ms of voice: under the 250 ms the endpointer needs to start an utterance.
        _ = try await Self.run(pipeline, microphone, [(Self.quiet, 25), (Self.loud, 10)])
        let heard = await recognizer.samplesPerUtterance
        #expect(heard.count == 1 && heard[0] >= 10 * AudioFrame.samplesPerFrame, "the recogniser heard \(heard) samples")
    }

    @Test func `asked to decode ahead from a sound's start, the recogniser hears nothing of the start before it`() async throws {
        let (pipeline, microphone, recognizer) = try Self.pipeline()
        // Voice from 500 ms; the sound named starts at 700 ms: decoding begins 100 ms before it, at 600 ms.
        await pipeline.decodeAhead(notBeforeMs: 700)
        await pipeline.decodeWhileStarting(true)
        _ = try await Self.run(pipeline, microphone, [(Self.quiet, 25), (Self.loud, 10)])
        let heard = await recognizer.samplesPerUtterance
        // From anywhere, it would hear the pre-roll and all 10 loud frames.
        #expect(heard == [5 * AudioFrame.samplesPerFrame], "the recogniser heard \(heard) samples")
    }

    @Test func `asked to decode the open utterance again, its final is the new decode's from where it was asked`() async throws {
        let (pipeline, microphone, _) = try Self.pipeline()
        let events = try await pipeline.start()
        await microphone.push(amplitude: Self.quiet, count: 25)
        await microphone.push(amplitude: Self.loud, count: 50)
        var seen = events.makeAsyncIterator()
        while let event = await seen.next() { if case .speechStarted = event { break } }
        await pipeline.decodeAgain(fromMs: 1_000) { $0.samples }
        await microphone.push(amplitude: Self.loud, count: 10)
        await microphone.push(amplitude: Self.quiet, count: 75)
        await microphone.stop()
        var final: UtteranceResult?
        while let event = await seen.next() { if case .final(let result) = event { final = result } }
        #expect(final?.audioStartMs == 1_000 && final?.hypothesis.text == "utterance 2", "\(String(describing: final))")
    }
}
