import AudioIO
import Foundation
import TalkLogging
import Testing

@testable import SpeechRecognition

/// Stands in for an engine: remembers how much audio each utterance got and answers with its number.
private actor CountingRecognizer: SpeechRecognizer {
    var samplesPerUtterance: [Int] = []
    var open = false
    let failAfterSamples: Int?
    /// Partials name how much audio the utterance has had, so each one is new.
    let partialsNameAudio: Bool
    private(set) var resets = 0

    init(failAfterSamples: Int? = nil, partialsNameAudio: Bool = false) {
        self.failAfterSamples = failAfterSamples
        self.partialsNameAudio = partialsNameAudio
    }

    func startUtterance() throws {
        samplesPerUtterance.append(0)
        open = true
    }

    func process(_ samples: [Int16]) throws -> Bool? {
        guard open else { throw SpeechRecognitionError.notInUtterance(operation: "process") }
        samplesPerUtterance[samplesPerUtterance.count - 1] += samples.count
        if let limit = failAfterSamples, samplesPerUtterance.reduce(0, +) > limit {
            throw SpeechRecognitionError.decodeFailed(operation: "process", code: -1)
        }
        return nil
    }

    func partial() -> Hypothesis? {
        guard open else { return nil }
        return Hypothesis(text: partialsNameAudio ? "heard \(samplesPerUtterance.last ?? 0)" : "partial \(samplesPerUtterance.count)")
    }

    func endUtterance() throws -> Hypothesis {
        open = false
        return Hypothesis(text: "utterance \(samplesPerUtterance.count)")
    }

    func reset() {
        if open { resets += 1 }
        open = false
    }

    func decodeCPUSeconds() -> Double { 0 }
    func useGrammar(_ jsgf: String?) throws {}
}

/// A microphone the test speaks into frame by frame (PipelineTests, PipelineAheadPartialTests).
actor ScriptedCapture: AudioCaptureDevice {
    var continuation: AsyncStream<CaptureEvent>.Continuation?
    func start() async throws -> AsyncStream<CaptureEvent> {
        let (stream, c) = AsyncStream.makeStream(of: CaptureEvent.self)
        continuation = c
        return stream
    }
    func stop() async { continuation?.finish() }
    func send(_ event: CaptureEvent) { continuation?.yield(event) }
}

private let logger = Logger(label: "test.pipeline")

private func run(_ samples: [Int16], recognizer: CountingRecognizer) async throws -> [UtteranceEvent] {
    let path = try SpeechTestAudio.writeTemporaryWAV(samples, name: "pipeline")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let device = FileCaptureDevice(path: path, options: .init(pacing: .asFastAsPossible, trailingSilenceMs: 1000), logger: logger)
    let pipeline = try UtterancePipeline(capture: device, recognizer: recognizer, timing: .streamTime, logger: logger)
    var events: [UtteranceEvent] = []
    for await event in try await pipeline.start() { events.append(event) }
    return events
}

@Suite struct PipelineTests {
    @Test func `each utterance is started, decoded while spoken and finalised, and every frame is accounted for`() async throws {
        let clip = try EndpointerTests.threeUtterances()
        let recognizer = CountingRecognizer()
        let events = try await run(clip.withNoise(dbfs: -70), recognizer: recognizer)
        let finals = events.compactMap { if case .final(let r) = $0 { return r } else { return nil } }
        try #require(finals.count == clip.speech.count)
        #expect(finals.map(\.hypothesis.text) == ["utterance 1", "utterance 2", "utterance 3"])
        for (u, known) in zip(finals, clip.speech) {
            #expect(abs(u.startMs - known.startMs) <= 150)
            #expect(abs(u.endMs - known.endMs) <= 150)
            #expect(u.audioStartMs <= u.startMs - 300, "pre-roll must reach 300 ms back")
            // The endpointer closes after `silenceMs` of silence (within a frame); file timing counts that
            // stretch of stream time plus the wall time finishing took.
            #expect(abs(u.closedAtMs - u.endMs - EndpointerSettings.default.silenceMs) <= AudioFrame.durationMs)
            #expect(u.finalizeMs > 0)
            #expect(u.endToFinalMs == Double(u.closedAtMs - u.endMs) + u.finalizeMs)
        }
        // Order: started, partials, ended, final; then finished once at the end.
        let kinds = events.map { e -> String in
            switch e {
            case .speechStarted: return "S"
            case .partial: return "p"
            case .speechEnded: return "E"
            case .final: return "F"
            case .finished: return "done"
            default: return "?"
            }
        }.filter { $0 != "p" }
        #expect(kinds == ["S", "E", "F", "S", "E", "F", "S", "E", "F", "done"])
        #expect(events.contains { if case .partial("partial 1", _) = $0 { true } else { false } })
        guard case .finished(let summary) = events.last else { Issue.record("no summary"); return }
        #expect(summary.framesIn == summary.framesInUtterances + summary.silentFrames)
        #expect(await recognizer.samplesPerUtterance.reduce(0, +) == summary.framesInUtterances * AudioFrame.samplesPerFrame)
        #expect(finals.map(\.frameCount).reduce(0, +) == summary.framesInUtterances)
    }

    @Test func `a 40 s monologue through the pipeline is cut at 30 s and the audio after the cut is not lost`() async throws {
        let piece = try SpeechTestAudio.speech(SpeechTestAudio.librivox0870)
        var samples = SpeechTestAudio.noise(ms: 1000, dbfs: -70)
        while samples.count < 41 * 16_000 { samples += SpeechTestAudio.noise(ms: 200, dbfs: -70) + piece }
        let recognizer = CountingRecognizer()
        let events = try await run(samples, recognizer: recognizer)
        let finals = events.compactMap { if case .final(let r) = $0 { return r } else { return nil } }
        try #require(finals.count == 2)
        #expect(finals[0].reason == .maximumLength)
        #expect(finals[1].audioStartMs == finals[0].closedAtMs, "the second utterance continues where the first was cut")
        guard case .finished(let summary) = events.last else { Issue.record("no summary"); return }
        #expect(summary.framesIn == summary.framesInUtterances + summary.silentFrames)
        #expect(await recognizer.samplesPerUtterance.reduce(0, +) == summary.framesInUtterances * AudioFrame.samplesPerFrame)
    }

    @Test func `a long utterance is decoded in segments split at pauses and reported as one`() async throws {
        let piece = try SpeechTestAudio.speech(SpeechTestAudio.librivox0870)
        let pause = SpeechTestAudio.noise(ms: 400, dbfs: -70)
        let samples = pause + piece + pause + piece + pause + piece + pause
        let recognizer = CountingRecognizer()
        let events = try await run(samples, recognizer: recognizer)
        let finals = events.compactMap { if case .final(let r) = $0 { return r } else { return nil } }
        try #require(finals.count == 1, "a 400 ms pause is shorter than silenceMs: one utterance")
        let perSegment = await recognizer.samplesPerUtterance
        let segments = perSegment.count
        // Pieces are 7 s: the first pause comes before 8 s are decoded, the second ends a 14 s segment.
        #expect(segments == 2, "split at the first pause after 8 s: \(perSegment)")
        #expect(finals[0].hypothesis.text == (1...segments).map { "utterance \($0)" }.joined(separator: " "))
        #expect(perSegment.reduce(0, +) == finals[0].frameCount * AudioFrame.samplesPerFrame)
    }

    @Test func `silence only gives no utterance and no recogniser work`() async throws {
        let recognizer = CountingRecognizer()
        let events = try await run([Int16](repeating: 0, count: 16_000 * 3), recognizer: recognizer)
        #expect(events.count == 1)
        guard case .finished(let summary) = events.first else { Issue.record("expected only the summary"); return }
        #expect(summary.silentFrames == summary.framesIn)
        #expect(await recognizer.samplesPerUtterance.isEmpty)
    }

    @Test func `a recogniser failure ends the stream with the error`() async throws {
        let clip = try EndpointerTests.threeUtterances()
        let events = try await run(clip.samples, recognizer: CountingRecognizer(failAfterSamples: 16_000))
        guard case .failed(let message) = events.last else { Issue.record("expected a failure, got \(events.suffix(2))"); return }
        #expect(message.contains("process"))
    }

    /// Barge-in over a reply waits for a partial: while it does, the owner asks for them more often.
    @Test(arguments: [(nil as Int?, 100), (2, 40)])
    func `partials come every 100 ms, or at the cadence the owner asks for`(everyFrames: Int?, spacingMs: Int) async throws {
        let capture = ScriptedCapture()
        let recognizer = CountingRecognizer(partialsNameAudio: true)
        let pipeline = try UtterancePipeline(capture: capture, recognizer: recognizer, timing: .wallClock, logger: logger)
        let events = try await pipeline.start()
        await pipeline.reportPartials(everyFrames: everyFrames)
        let speech = try SpeechTestAudio.speech(SpeechTestAudio.librivox0870)
        for frame in SpeechTestAudio.frames(SpeechTestAudio.noise(ms: 500, dbfs: -70) + speech.prefix(2 * 16_000)) {
            await capture.send(.frame(frame))
        }
        await capture.stop()
        var ends: [Int] = []
        var utterances = 0
        for await event in events {
            if case .partial(_, let endMs?) = event { ends.append(endMs) }
            if case .speechStarted = event { utterances += 1 }
        }
        let gaps = zip(ends.dropFirst(), ends).map { $0 - $1 }
        #expect(utterances == 1 && gaps.count >= 10 && Set(gaps) == [spacingMs], "\(utterances) utterances, partials \(gaps) ms apart")
    }

    /// Started once the endpointer has heard 250 ms of voice, the recogniser has the pre-roll and that window (650
    /// ms of audio) to decode before its first partial, which came 120 to 370 ms after the start on the loopback.
    /// Decoding from the first voiced frame, it has the audio while the endpointer is still counting.
    @Test(arguments: [false, true])
    func `decoding from the first voiced frame, the recogniser hears a start before the endpointer calls it`(ahead: Bool) async throws {
        let capture = ScriptedCapture()
        let recognizer = CountingRecognizer()
        let pipeline = try UtterancePipeline(capture: capture, recognizer: recognizer, timing: .wallClock, logger: logger)
        let events = try await pipeline.start()
        await pipeline.decodeWhileStarting(ahead)
        let speech = try SpeechTestAudio.speech(SpeechTestAudio.librivox0870)
        // 200 ms of voice: under the 250 ms the endpointer needs to start an utterance.
        for frame in SpeechTestAudio.frames(SpeechTestAudio.noise(ms: 500, dbfs: -70) + speech.prefix(3200)) {
            await capture.send(.frame(frame))
        }
        await capture.stop()
        var seen: [UtteranceEvent] = []
        for await event in events { seen.append(event) }
        #expect(!seen.contains { if case .speechStarted = $0 { true } else { false } }, "\(seen)")
        let heard = await recognizer.samplesPerUtterance
        if ahead {
            #expect(heard.count == 1 && heard[0] >= 3200, "the recogniser heard \(heard) samples")
        } else {
            #expect(heard.isEmpty, "the recogniser heard \(heard) samples")
        }
    }

    @Test func `a start the endpointer gives up is decoded ahead and dropped unheard`() async throws {
        let capture = ScriptedCapture()
        let recognizer = CountingRecognizer(partialsNameAudio: true)
        let pipeline = try UtterancePipeline(capture: capture, recognizer: recognizer, timing: .wallClock, logger: logger)
        let events = try await pipeline.start()
        await pipeline.decodeWhileStarting(true)
        let speech = try SpeechTestAudio.speech(SpeechTestAudio.librivox0870)
        // A 100 ms burst of voice (under the 250 ms start rule), then silence; then the user speaking.
        let burst = SpeechTestAudio.noise(ms: 500, dbfs: -70) + speech.prefix(1600) + SpeechTestAudio.noise(ms: 800, dbfs: -70)
        for frame in SpeechTestAudio.frames(burst + speech.prefix(2 * 16_000) + SpeechTestAudio.noise(ms: 1000, dbfs: -70)) {
            await capture.send(.frame(frame))
        }
        await capture.stop()
        var seen: [UtteranceEvent] = []
        for await event in events { seen.append(event) }
        let starts = seen.filter { if case .speechStarted = $0 { true } else { false } }
        let finals = seen.compactMap { if case .final(let r) = $0 { r } else { nil } }
        #expect(starts.count == 1 && finals.count == 1, "\(seen)")
        #expect(await recognizer.resets == 1, "the burst was decoded ahead and dropped")
        // Dropped when the endpointer gave it up (400 ms of pre-roll, the 100 ms burst, the 220 ms of silence the start
        // window forgives: 720 ms), not fed the silence after it until the user's start.
        let heard = await recognizer.samplesPerUtterance
        #expect(heard.count == 2 && heard[0] <= 720 * 16, "the recogniser heard \(heard) samples")
        // The utterance the recogniser finished is the user's, not the burst with it.
        #expect(finals.first.map { $0.audioStartMs >= 900 } == true, "\(finals.first.map(\.audioStartMs) ?? -1)")
    }

    /// The reply's echo can keep the endpointer counting a start for seconds (voiced frames less than the 200 ms it
    /// forgives apart). Asked to decode ahead only then (the user's sound lowered the reply), the recogniser must not
    /// be handed that whole stretch at once: decoding it (a third of its length on the machine) is what the first
    /// partial waits on. It gets what an uninterrupted start hands over, the pre-roll and the start window (660 ms).
    @Test func `asked to decode ahead in a start the echo kept open for seconds, the recogniser gets its last 660 ms`() async throws {
        let (first, resets) = try await Self.firstPartialAfterEchoKeptStart { pipeline, recognizer, _ in
            #expect(await recognizer.samplesPerUtterance.isEmpty, "nothing decoded before it was asked")
            await pipeline.decodeWhileStarting(true)
        }
        // The start comes on the third loud frame: 660 ms of pending start, then those two frames.
        let limit = (660 + 3 * AudioFrame.durationMs) * 16
        let named = first.flatMap { Int($0.split(separator: " ").last ?? "") }
        #expect(named.map { $0 <= limit } == true, "the first partial came after \(first ?? "none") samples, not \(limit) at most")
        #expect(resets == 0, "the start decoded ahead became the utterance")
    }

    /// The same start the echo kept open, with the owner telling where the sound that may be the user began: the
    /// recogniser gets the 100 ms before it and what follows, not the echo's pre-roll and window (660 ms) at once.
    @Test func `asked to decode ahead from a sound's start, the recogniser gets 100 ms before it and no more of the echo`() async throws {
        let (first, resets) = try await Self.firstPartialAfterEchoKeptStart { pipeline, _, userMs in
            await pipeline.decodeAhead(notBeforeMs: userMs)
            await pipeline.decodeWhileStarting(true)
        }
        // The start comes on the third loud frame: the 100 ms before the sound, then those three frames.
        let limit = (UtterancePipeline.aheadLeadMs + 3 * AudioFrame.durationMs) * 16
        let named = first.flatMap { Int($0.split(separator: " ").last ?? "") }
        #expect(named.map { $0 <= limit } == true, "the first partial came after \(first ?? "none") samples, not \(limit) at most")
        #expect(resets == 0, "the start decoded ahead became the utterance")
    }

    /// 2 s in which one loud frame in ten keeps a start counting (10 voiced frames of the 13 it needs), then the user:
    /// loud for a second, then quiet. `atUser` runs once the pipeline has judged every frame before the user (where
    /// the owner hears the user's sound; it gets the stream position of that sound). Returns the first partial (the
    /// recogniser's partials name how many samples it had heard) and how often the recogniser was reset.
    private static func firstPartialAfterEchoKeptStart(
        atUser: (UtterancePipeline, CountingRecognizer, _ userMs: Int) async -> Void
    ) async throws -> (first: String?, resets: Int) {
        let capture = ScriptedCapture()
        let recognizer = CountingRecognizer(partialsNameAudio: true)
        let pipeline = try UtterancePipeline(capture: capture, recognizer: recognizer, timing: .wallClock, logger: logger)
        let events = try await pipeline.start()
        var seen = events.makeAsyncIterator()
        let quiet = SpeechTestAudio.noise(ms: 180, dbfs: -70)
        let echo = (0..<10).flatMap { _ in SpeechTestAudio.noise(ms: 20, dbfs: -20) + quiet }
        let before = SpeechTestAudio.noise(ms: 500, dbfs: -70) + echo
        let frames = SpeechTestAudio.frames(before + SpeechTestAudio.noise(ms: 1000, dbfs: -20) + SpeechTestAudio.noise(ms: 1000, dbfs: -70))
        let split = before.count / AudioFrame.samplesPerFrame
        for frame in frames[..<split] { await capture.send(.frame(frame)) }
        // In order after those frames: the pipeline has judged them all when this comes back.
        await capture.send(.resumed(device: "test"))
        while let event = await seen.next() { if case .resumed = event { break } }
        await atUser(pipeline, recognizer, split * AudioFrame.durationMs)
        for frame in frames[split...] { await capture.send(.frame(frame)) }
        await capture.stop()
        var after: [UtteranceEvent] = []
        while let event = await seen.next() { after.append(event) }
        try #require(after.filter { if case .speechStarted = $0 { true } else { false } }.count == 1, "\(after)")
        return (after.compactMap { if case .partial(let text, _) = $0 { text } else { nil } }.first, await recognizer.resets)
    }

    @Test func `stop drops the utterance in progress: no final arrives after it`() async throws {
        let capture = ScriptedCapture()
        let recognizer = CountingRecognizer()
        let pipeline = try UtterancePipeline(capture: capture, recognizer: recognizer, timing: .wallClock, logger: logger)
        let events = try await pipeline.start()
        let speech = try SpeechTestAudio.speech(SpeechTestAudio.librivox0870)
        let frames = SpeechTestAudio.frames(SpeechTestAudio.noise(ms: 500, dbfs: -70) + speech)
        var iterator = events.makeAsyncIterator()
        var started = false
        for frame in frames {
            await capture.send(.frame(frame))
            if frame.sequence == 60 { break }
        }
        while let event = await iterator.next() {
            if case .speechStarted = event { started = true; break }
        }
        #expect(started)
        await pipeline.stop()
        for frame in frames.dropFirst(61) { await capture.send(.frame(frame)) }
        var after: [UtteranceEvent] = []
        while let event = await iterator.next() { after.append(event) }
        #expect(!after.contains { if case .final = $0 { return true } else { return false } }, "\(after)")
    }

    @Test func `an utterance in progress when the microphone vanishes is delivered once, before the interruption`() async throws {
        let capture = ScriptedCapture()
        let recognizer = CountingRecognizer()
        let pipeline = try UtterancePipeline(capture: capture, recognizer: recognizer, timing: .wallClock, logger: logger)
        let events = try await pipeline.start()
        let speech = try SpeechTestAudio.speech(SpeechTestAudio.librivox0870)
        let frames = SpeechTestAudio.frames(SpeechTestAudio.noise(ms: 500, dbfs: -70) + speech)
        for frame in frames.prefix(80) { await capture.send(.frame(frame)) }
        await capture.send(.interrupted(reason: "source vanished"))
        await capture.send(.resumed(device: "vmic"))
        await capture.stop()
        var seen: [UtteranceEvent] = []
        for await event in events { seen.append(event) }
        let kinds = seen.compactMap { e -> String? in
            switch e {
            case .speechStarted: return "S"
            case .speechEnded: return "E"
            case .final: return "F"
            case .interrupted: return "I"
            case .resumed: return "R"
            default: return nil
            }
        }
        #expect(kinds == ["S", "E", "F", "I", "R"], "\(seen)")
        let finals = seen.compactMap { if case .final(let r) = $0 { return r } else { return nil } }
        #expect(finals.first?.reason == .endOfStream)
        #expect(finals.first.map { $0.frameCount > 40 } == true, "the audio before the loss reached the recogniser")
    }
}
