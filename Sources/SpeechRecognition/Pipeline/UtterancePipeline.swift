import AudioIO
import Foundation
import Synchronization
import TalkLogging

/// The capture side of Talk mode, shared by the daemon, `transcribe` and `bench`: capture events go
/// through the endpointer; on speech start the pre-roll and the following frames go to the recogniser
/// while the user speaks, and at the endpoint only the search is finished. Results come out as one
/// ordered `AsyncStream` of `UtteranceEvent`s.
///
/// `stop()` bumps the generation, so a result that was being finished when the user stopped is dropped
/// rather than delivered late.
package actor UtterancePipeline {
    /// How `endToFinalMs` is measured.
    package enum Timing: Sendable, Equatable {
        /// Frames arrive as they are spoken (a microphone, a paced file): wall time from the capture of the
        /// last voiced frame.
        case wallClock
        /// Frames arrive faster than real time (a file read at full speed): stream time from the last voiced
        /// frame to the endpoint, plus the wall time finishing took.
        case streamTime
    }

    private let capture: any AudioCaptureDevice
    let recognizer: any SpeechRecognizer
    private let settings: EndpointerSettings
    private let timing: Timing
    let partialEveryFrames: Int
    /// `reportPartials(everyFrames:)`: the cadence asked for now; nil: `partialEveryFrames`.
    var partialsAskedEveryFrames: Int?
    /// `decodeWhileStarting(_:)`.
    private var decodesWhileStarting = false
    private let segmentation: DecoderSegmentation?
    let recorder: UtteranceRecorder?
    let logger: Logger

    var generation = 0
    private var endpointer: Endpointer
    var utterance: OpenUtterance?
    var summary = PipelineSummary()
    var lastPartial = ""
    /// Where the newest frame ends, in stream milliseconds.
    var streamEndMs = 0
    /// When the newest frame's last sample was captured (monotonic ns), and when the pipeline took it up: the trace
    /// of how far behind the microphone its events come (`traceLag`).
    var headCaptureNs: UInt64 = 0
    var headTakenNs: UInt64 = 0
    /// `streamEndMs`, readable from any thread (`heardThroughMs`).
    private let heardThrough = Atomic<Int>(0)
    private var continuation: AsyncStream<UtteranceEvent>.Continuation?
    /// The grammar asked for last (`useGrammar`; nil: the recogniser's own mode), asked of the recogniser again as each
    /// utterance starts, so a change that met an utterance starting is not lost to it.
    private var wantedGrammar: String?
    private var loop: Task<Void, Never>?

    /// The utterance being decoded.
    struct OpenUtterance {
        var startMs: Int
        var audioStartMs: Int
        /// Decoded ahead of the endpointer's start (`decodeWhileStarting`): not an utterance until it starts.
        var ahead = false
        /// The last words the recogniser had while decoding ahead (partials taken at the usual cadence, not
        /// reported): the start reports them if its own partial is empty (`reportPartial`).
        var heardAhead = ""
        var frames = 0
        var cpuSeconds = 0.0
        var framesSincePartial = 0
        /// Decoder segments already finished, word times relative to `audioStartMs`.
        var segments: [Hypothesis] = []
        /// `frames` when the current decoder segment began.
        var segmentStartFrames = 0
        /// Its latest frames as they came (`UtteranceRedecode.keptFrames`), for a decode again from the user's onset.
        var kept = UtteranceRedecode.KeptFrames()
        /// `decodeAgain`, asked for and not yet carried out.
        var decodeAgain: UtteranceRedecode.Request?
    }

    /// The pipeline runs where the recogniser runs (PocketSphinx: its own thread, `ThreadSerialExecutor`): each frame
    /// fed and each partial asked for is then a call on the same thread, not a trip to the decoder's thread and back
    /// to the pool (three per frame and one per partial), each waiting for a thread to be scheduled, which on a busy
    /// machine adds up behind the microphone. Frames still reach the pipeline from the pool, one wake-up per frame.
    package nonisolated var unownedExecutor: UnownedSerialExecutor { recognizer.unownedExecutor }

    /// `partialEveryFrames` spaces out partial-hypothesis requests (5 frames = 100 ms) to save CPU.
    /// `segmentation` splits long utterances for the decoder (see `DecoderSegmentation`); nil never splits.
    /// `recorder`, when given, gets each utterance's audio (exactly what the recogniser heard) as a file.
    package init(
        capture: any AudioCaptureDevice, recognizer: any SpeechRecognizer, settings: EndpointerSettings = .default,
        timing: Timing, partialEveryFrames: Int = 5, segmentation: DecoderSegmentation? = .default,
        recorder: UtteranceRecorder? = nil, logger: Logger
    ) throws {
        self.capture = capture
        self.recognizer = recognizer
        self.settings = try settings.validated()
        self.timing = timing
        self.partialEveryFrames = max(1, partialEveryFrames)
        self.segmentation = segmentation
        self.recorder = recorder
        self.logger = logger
        endpointer = Endpointer(settings: self.settings)
    }

    /// Where the pipeline has heard through: the end of the newest frame it took up, in stream milliseconds (0 before
    /// the first). Read without waiting on the pipeline: the Talk loop compares it with the microphone's newest frame
    /// to know how far behind the recogniser's words are (barge-in acts on recent audio only).
    package nonisolated var heardThroughMs: Int? { heardThrough.load(ordering: .relaxed) }

    /// Starts capture and returns the events of this run. A previous run is stopped first.
    package func start() async throws -> AsyncStream<UtteranceEvent> {
        await stop()
        generation &+= 1
        let gen = generation
        let frames = try await capture.start()
        let (events, continuation) = AsyncStream.makeStream(of: UtteranceEvent.self)
        self.continuation = continuation
        endpointer = Endpointer(settings: settings)
        summary = PipelineSummary()
        heardThrough.store(0, ordering: .relaxed)
        loop = Task { await self.consume(frames, generation: gen) }
        logger.debug("pipeline started", metadata: ["talk.generation": "\(gen)"])
        return events
    }

    /// Stops capture and drops the utterance in progress; its result will not be delivered. Idempotent.
    package func stop() async {
        generation &+= 1
        loop?.cancel()
        loop = nil
        await capture.stop()
        if utterance != nil { await recognizer.reset() }
        await recorder?.cancel()
        utterance = nil
        endpointer.reset()
        continuation?.finish()
        continuation = nil
    }

    /// Partial hypotheses every `frames` frames from now on (at least 1), the utterance being heard included; nil: back
    /// to the pipeline's own `partialEveryFrames`. A partial costs a search of the lattice so far: the owner asks for
    /// them more often only while it waits on them (barge-in over a reply).
    package func reportPartials(everyFrames frames: Int?) {
        partialsAskedEveryFrames = frames.map { max(1, $0) }
    }

    /// With `on`, the recogniser starts on an utterance's first voiced frame rather than once the endpointer has
    /// heard `speechToStartMs` of them: the frames the start would hand over are decoded as they come, so at the
    /// start only the last one is left and the first partial comes with it, not after the pre-roll and the start
    /// window are decoded in one go. At most `aheadLimitMs` of them: a start window the reply's echo has kept open for
    /// seconds (its voiced frames less than `startGapToleranceMs` apart) would otherwise be handed over whole, and
    /// decoding it delays the first partial by a third of its length. What starts an utterance does not change; a
    /// start the endpointer gives up is dropped unheard, and one already decoded ahead goes on when `on` turns false.
    /// Sound that never becomes an utterance is decoded too: the owner asks for it only while a sound may be the user
    /// cutting in (over a reply it lowered for that sound).
    package func decodeWhileStarting(_ on: Bool) {
        decodesWhileStarting = on
    }

    /// How much of a pending start is decoded ahead: what a start hands over when its voice is not interrupted (the
    /// pre-roll and the start window).
    private var aheadLimitMs: Int { settings.preRollMs + settings.speechToStartMs }

    /// `decodeAhead(notBeforeMs:)`.
    private var aheadNotBeforeMs: Int?

    /// Decoding ahead (`decodeWhileStarting`) starts no earlier than `aheadLeadMs` before `ms` (stream ms: where the
    /// sound that may be the user began); nil: from `aheadLimitMs` back. The pending start's frames are decoded in one
    /// go when decoding ahead begins, and the reply's echo often keeps a start window open before the user speaks:
    /// its pre-roll and window, up to 650 ms of audio decoded at once, put the recogniser 300 ms behind the
    /// microphone just as the user began (loopback, local voice, a 2-core machine), and their start and first words
    /// came that much later. The echo before their sound is no part of their words.
    package func decodeAhead(notBeforeMs ms: Int?) {
        aheadNotBeforeMs = ms
    }

    /// Kept before the sound's start when decoding ahead from it: a sound onset is the first of two loud frames, and
    /// a soft first consonant lies within 100 ms before it (the barge-in evidence's own pre-roll).
    static let aheadLeadMs = 100

    /// From the next utterance on, the recogniser takes only the sentences of this JSGF grammar (an approval's
    /// answers); nil: back to its own mode. The utterance being heard keeps the search it began with, including
    /// where it is split at a pause. A grammar the recogniser refuses is logged, and recognition goes on as before.
    package func useGrammar(_ jsgf: String?) async {
        wantedGrammar = jsgf
        if utterance == nil { await apply(grammar: jsgf) }
    }

    private func apply(grammar jsgf: String?) async {
        do {
            try await recognizer.useGrammar(jsgf)
        } catch {
            logger.error("the recogniser refused a grammar; recognising as before", metadata: ["error": "\(error)"])
        }
    }

    private func consume(_ frames: AsyncStream<CaptureEvent>, generation gen: Int) async {
        for await event in frames {
            guard gen == generation, !Task.isCancelled else { return }
            do {
                switch event {
                case .frame(let frame):
                    try await handle(frame, generation: gen)
                case .interrupted(let reason):
                    // What was said before the device vanished is still delivered, once: the utterance ends here.
                    try await finishUtterance(generation: gen)
                    endpointer.reset()
                    if utterance?.ahead == true { await dropAhead() }
                    emit(.interrupted(reason: reason), generation: gen)
                case .resumed(let device):
                    emit(.resumed(device: device), generation: gen)
                case .finished:
                    try await finishSource(generation: gen)
                    return
                }
            } catch {
                guard gen == generation else { return }
                logger.error("recogniser failed", metadata: ["error": "\(error)"])
                emit(.failed(String(describing: error)), generation: gen)
                continuation?.finish()
                await capture.stop()
                return
            }
        }
        await captureEnded(generation: gen)
    }

    private func handle(_ frame: AudioFrame, generation gen: Int) async throws {
        summary.framesIn += 1
        streamEndMs = frame.streamPositionMs + AudioFrame.durationMs
        headCaptureNs = frame.captureTimeNs
        headTakenNs = monotonicNanoseconds()
        heardThrough.store(streamEndMs, ordering: .relaxed)
        var voice: Bool?
        if let request = utterance?.decodeAgain { try await decodeAgain(request, generation: gen) }
        if let open = utterance {
            let heard = try await traced("feed", frames: 1) { try await feed([frame]) }
            guard gen == generation else { return }
            // Ahead of a start, the recogniser's voice signal is not the endpointer's to hear yet.
            voice = open.ahead ? nil : heard
        }
        for event in endpointer.process(frame, voiceActivity: voice) {
            switch event {
            case .speechStarted(let position, _) where utterance?.ahead == true:
                // Decoded ahead (from `aheadLimitMs` back at most): the recogniser has had the frames it needs.
                utterance?.ahead = false
                utterance?.startMs = position
                // The start's partial is taken at once, as when the pre-roll and start window are handed over.
                utterance?.framesSincePartial = partialsAskedEveryFrames ?? partialEveryFrames
                lastPartial = ""
                traceLag("speech start", positionMs: position)
                emit(.speechStarted(positionMs: position), generation: gen)
            case .speechStarted(let position, let frames):
                await apply(grammar: wantedGrammar)
                try await recognizer.startUtterance()
                let audioStart = frames.first?.streamPositionMs ?? position
                try await recorder?.begin(name: String(format: "utterance-%09.2f", Double(audioStart) / 1000))
                utterance = OpenUtterance(startMs: position, audioStartMs: audioStart)
                lastPartial = ""
                traceLag("speech start", positionMs: position)
                emit(.speechStarted(positionMs: position), generation: gen)
                _ = try await traced("start window", frames: frames.count) { try await feed(frames) }
            case .speechEnded(let lastEnd, let closedAt, let lastNs, let reason):
                try await close(lastEnd: lastEnd, closedAt: closedAt, lastNs: lastNs, reason: reason, generation: gen)
            }
            guard gen == generation else { return }
        }
        try await followStart()
        if utterance?.ahead == true { return await notePartialAhead() }
        guard utterance != nil else { return }
        try await splitAtPause(generation: gen)
        if utterance != nil { try await reportPartial(generation: gen) }
    }

    /// `decodeWhileStarting`: a start the endpointer is counting is decoded from its first voiced frame, and one it
    /// gave up is dropped.
    private func followStart() async throws {
        if utterance?.ahead == true {
            if endpointer.pendingStartFrames == nil { await dropAhead() }
            return
        }
        guard utterance == nil, decodesWhileStarting, let pending = endpointer.pendingStartFrames else { return }
        let notBefore = aheadNotBeforeMs.map { $0 - Self.aheadLeadMs } ?? .min
        let frames = pending.suffix(EndpointerSettings.frames(aheadLimitMs)).filter { $0.streamPositionMs >= notBefore }
        guard let first = frames.first else { return }
        await apply(grammar: wantedGrammar)
        try await recognizer.startUtterance()
        try await recorder?.begin(name: String(format: "utterance-%09.2f", Double(first.streamPositionMs) / 1000))
        utterance = OpenUtterance(startMs: first.streamPositionMs, audioStartMs: first.streamPositionMs, ahead: true)
        _ = try await traced("ahead start", frames: frames.count) { try await feed(Array(frames)) }
    }

    /// While decoding ahead, keeps the recogniser's words (at the partials' cadence) for the start: a grammar's search
    /// has a word while it is being said and may drop it in the pause after, until the next word confirms it
    /// ("go" for 120 ms, then nothing for 320 ms, then "go forward"). A start the endpointer confirms in that pause
    /// would report nothing until the next word, and barge-in over a reply waits for a partial.
    private func notePartialAhead() async {
        guard let open = utterance, open.framesSincePartial >= partialsAskedEveryFrames ?? partialEveryFrames else { return }
        utterance?.framesSincePartial = 0
        if let text = await traced("partial", { await recognizer.partial()?.text }), !text.isEmpty { utterance?.heardAhead = text }
    }

    /// Drops a start decoded ahead that did not come: the recogniser forgets it.
    private func dropAhead() async {
        await traced("ahead dropped", frames: utterance?.frames ?? 0) { await recognizer.reset() }
        await recorder?.cancel()
        utterance = nil
    }

    /// Finishes the decoder's segment at a pause once it is long, so the search at the endpoint only has
    /// the last stretch to finish; the user still sees one utterance.
    private func splitAtPause(generation gen: Int) async throws {
        guard let rule = segmentation, let open = utterance, let silence = endpointer.silenceSinceSpeechMs,
              silence >= rule.pauseMs, (open.frames - open.segmentStartFrames) * AudioFrame.durationMs >= rule.afterMs
        else { return }
        let cpu0 = await recognizer.decodeCPUSeconds()
        var part = try await recognizer.endUtterance()
        try await recognizer.startUtterance()
        guard gen == generation else { return }
        let offset = open.segmentStartFrames * AudioFrame.durationMs
        part.words = part.words.map { var w = $0; w.startMs += offset; w.endMs += offset; return w }
        utterance?.segments.append(part)
        utterance?.segmentStartFrames = open.frames
        utterance?.cpuSeconds += await recognizer.decodeCPUSeconds() - cpu0
    }

    private func finishSource(generation gen: Int) async throws {
        try await finishUtterance(generation: gen)
        if utterance?.ahead == true { await dropAhead() }
        guard gen == generation else { return }
        summary.silentFrames = endpointer.droppedFrames
        emit(.finished(summary), generation: gen)
        continuation?.finish()
    }

    /// The device ended its stream without `.finished` (it was stopped from outside): what was open is
    /// still delivered, then the run ends. After `stop()` or `.finished` the generation check makes this a no-op.
    private func captureEnded(generation gen: Int) async {
        guard gen == generation, continuation != nil else { return }
        do { try await finishUtterance(generation: gen) } catch { emit(.failed(String(describing: error)), generation: gen) }
        continuation?.finish()
        continuation = nil
    }

    /// Closes an utterance in progress where the audio stopped (end of a file, a lost device).
    private func finishUtterance(generation gen: Int) async throws {
        if case .speechEnded(let lastEnd, let closedAt, let lastNs, let reason) = endpointer.finish(atMs: streamEndMs) {
            try await close(lastEnd: lastEnd, closedAt: closedAt, lastNs: lastNs, reason: reason, generation: gen)
        }
    }

    /// Feeds frames to the recogniser, counting them and the CPU time it takes; returns its voice signal.
    func feed(_ frames: [AudioFrame]) async throws -> Bool? {
        let fed = try await recognizer.feed(frames.map(\.samples))
        utterance?.frames += frames.count
        utterance?.framesSincePartial += frames.count
        utterance?.cpuSeconds += fed.cpuSeconds
        utterance?.kept.append(frames)
        if let recorder { for frame in frames { try await recorder.append(frame) } }
        return fed.voice
    }

    private func reportPartial(generation gen: Int) async throws {
        guard let open = utterance, open.framesSincePartial >= partialsAskedEveryFrames ?? partialEveryFrames else { return }
        utterance?.framesSincePartial = 0
        let searchNs = monotonicNanoseconds()
        let current = await traced("partial") { await recognizer.partial() } ?? .empty
        let decoded = DecoderSegmentation.joined(open.segments + [current]).text
        // An empty hypothesis retracts nothing (it is not reported), so words heard ahead of the start stand too.
        let text = decoded.isEmpty ? open.heardAhead : decoded
        guard gen == generation, !text.isEmpty, text != lastPartial else { return }
        lastPartial = text
        traceLag("partial", positionMs: streamEndMs, searchNs: searchNs, text: text)
        emit(.partial(text, endMs: streamEndMs), generation: gen)
    }

    private func close(lastEnd: Int, closedAt: Int, lastNs: UInt64, reason: EndpointReason, generation gen: Int) async throws {
        guard let open = utterance else { return }
        emit(.speechEnded(lastSpeechEndMs: lastEnd, closedAtMs: closedAt), generation: gen)
        let closedNs = monotonicNanoseconds()
        let cpu0 = await recognizer.decodeCPUSeconds()
        var last = try await recognizer.endUtterance()
        let readyNs = monotonicNanoseconds()
        let offset = open.segmentStartFrames * AudioFrame.durationMs
        last.words = last.words.map { var w = $0; w.startMs += offset; w.endMs += offset; return w }
        let hypothesis = DecoderSegmentation.joined(open.segments + [last])
        utterance = nil
        guard gen == generation else { return }
        let finalizeMs = Double(readyNs &- closedNs) / 1e6
        let endToFinal: Double
        switch timing {
        case .wallClock: endToFinal = Double(readyNs &- min(lastNs, readyNs)) / 1e6
        case .streamTime: endToFinal = Double(closedAt - lastEnd) + finalizeMs
        }
        let cpuNow = await recognizer.decodeCPUSeconds()
        let cpu = open.cpuSeconds + cpuNow - cpu0
        let recording = try await recorder?.finish()
        summary.framesInUtterances += open.frames
        summary.decodeCPUSeconds += cpu
        emit(.final(UtteranceResult(
            generation: gen, hypothesis: hypothesis, startMs: open.startMs, audioStartMs: open.audioStartMs, endMs: lastEnd, closedAtMs: closedAt,
            reason: reason, frameCount: open.frames, finalizeMs: finalizeMs, endToFinalMs: endToFinal,
            decodeCPUSeconds: cpu, recording: recording?.path)), generation: gen)
    }

    func emit(_ event: UtteranceEvent, generation gen: Int) {
        guard gen == generation else { return }
        continuation?.yield(event)
    }
}
