import AudioIO
import Foundation
import SpeechRecognition
import TalkBench
import TalkLogging
import TalkSession

/// `bench aec --replay DIR --local-words`: the words a recorded barge-in session's own recogniser sends (`run --stt
/// local`), from the live decode and from the decode again at the barge-in (`UtterancePipeline.decodeAgain`), on the
/// same replayed audio. Each session is heard from its start by one recogniser (the session's: dictation, or
/// `--grammar`), through the endpointer and the pipeline as `run` hears it, so its cepstral mean has heard the question
/// before the reply, as the live one had.
///
/// What the session did is rebuilt from its audio as `--released-words` does (`ReleasedWordsReplay`): the user's start
/// from the clip, the gate's sound onsets from the cleaned frames, the barge-in `decisionMs` after the user's start and
/// the user's onset from the onsets heard by then. The session decodes an utterance from its first voiced frame once
/// the reply is lowered for a sound (`decodeWhileStarting`, from shortly before that sound): here from that onset on.
/// The final judged is the one of the utterance open at the decision, as the pipeline gives it (the session's echo
/// split at the user's own sound, `TurnTaking.echoWords`, is not replayed).
struct LocalWordsReplay {
    struct Variant: Codable {
        var name: String
        var withWords = 0
        var goFirst = 0
        var exact = 0
        var meanWER = 0.0
        var heard: [String] = []
        var wer: [Double] = []
    }

    struct Session: Codable {
        var recording: String
        var userStartMs: Int?
        var onsetMs: Int?
        var fromMs: Int?
    }

    struct Report: Codable {
        var decisionMs: Int
        var grammar: String?
        var sessions: [Session] = []
        var variants: [Variant] = [Variant(name: "live decode"), Variant(name: "decoded again from the onset")]
    }

    let released: ReleasedWordsReplay
    let options: EchoCancellerOptions
    let decisionMs: Int
    let grammar: String?

    init(options: EchoCancellerOptions, decisionMs: Int, grammar: String?) throws {
        released = try ReleasedWordsReplay(options: options, decisionMs: decisionMs)
        self.options = options
        self.decisionMs = decisionMs
        self.grammar = grammar
    }

    func run(folders: [String]) async throws -> Report {
        var report = Report(decisionMs: decisionMs, grammar: grammar)
        let said = TranscriptNormalizer.words(ReleasedWordsReplay.spoken)
        for folder in folders {
            let recording = try EchoCaptureRecording(folder: folder)
            let replay = try recording.replay(options: options)
            var session = Session(recording: folder)
            defer { report.sessions.append(session) }
            guard let (start, _) = released.userStart(raw: recording.raw, far: recording.far) else { continue }
            let userStartMs = start * 1000 / AudioFrame.sampleRate
            session.userStartMs = userStartMs
            let frames = ReleasedWordsReplay.frames(replay)
            let decided = userStartMs + decisionMs
            let onsets = ReleasedWordsReplay.onsets(frames).filter { $0 + SpeechEnergy.onsetFrames * AudioFrame.durationMs <= decided }
            let onset = TurnTaking.userOnsetMs(of: onsets) ?? userStartMs
            session.onsetMs = onset
            let release = HeldUtteranceRelease(startMs: .min, onsetMs: onset, heardThroughMs: decided)
            session.fromMs = release.fromMs
            for v in report.variants.indices {
                let words = try await final(frames, onsetMs: onset, decidedMs: decided, userStartMs: userStartMs,
                                            again: v == 1 ? release : nil)
                let heard = TranscriptNormalizer.words(words)
                let rate = WordErrors.between(reference: said, hypothesis: heard).rate
                report.variants[v].heard.append(words)
                report.variants[v].wer.append((rate * 100).rounded() / 100)
                if rate <= 0.25 { report.variants[v].withWords += 1 }
                if heard.first == said.first { report.variants[v].goFirst += 1 }
                if heard == said { report.variants[v].exact += 1 }
            }
        }
        for v in report.variants.indices where !report.variants[v].wer.isEmpty {
            let mean = report.variants[v].wer.reduce(0, +) / Double(report.variants[v].wer.count)
            report.variants[v].meanWER = (mean * 1000).rounded() / 1000
        }
        return report
    }

    /// The session's frames through a pipeline on a recogniser of its own; with `again`, the utterance open at the
    /// decision is decoded again from it. The words of the final of the utterance open at the decision ("" if none).
    private func final(_ frames: [AudioFrame], onsetMs: Int, decidedMs: Int, userStartMs: Int,
                       again: HeldUtteranceRelease?) async throws -> String {
        let recognizer = try await withCheckedThrowingContinuation { (done: CheckedContinuation<PocketSphinxRecognizer, any Error>) in
            let thread = Thread { done.resume(with: Result { try RelayUserTurn.recognizer(grammar: grammar) }) }
            thread.name = "bench-recognizer"
            thread.start()
        }
        var logger = Logger(label: "openclaw-talk.bench.aec")
        let debugging = ProcessInfo.processInfo.environment["LOCALWORDS_DEBUG"] != nil
        logger.logLevel = debugging ? .debug : .warning
        let capture = ReplayedCapture()
        let pipeline = try UtterancePipeline(capture: capture, recognizer: recognizer, timing: .streamTime, logger: logger)
        let events = try await pipeline.start()
        let collected = Task {
            var finals: [UtteranceResult] = []
            for await event in events {
                if case .final(let result) = event { finals.append(result) }
                if debugging { FileHandle.standardError.write(Data("\(event)\n".utf8)) }
            }
            return finals
        }
        // The gate hears the onset two loud frames in; the reply is lowered and decoding from first voiced frames begins.
        let aheadAt = onsetMs + SpeechEnergy.onsetFrames * AudioFrame.durationMs
        var index = 0
        func send(through ms: Int) async throws {
            while index < frames.count, frames[index].streamPositionMs < ms {
                await capture.send(.frame(frames[index]))
                index += 1
            }
            // The pipeline has taken them up (a bench's wait on its position, read without blocking it).
            while (pipeline.heardThroughMs ?? 0) < min(ms, frames.count * AudioFrame.durationMs) { try await Task.sleep(for: .milliseconds(1)) }
        }
        try await send(through: aheadAt)
        await pipeline.reportPartials(everyFrames: 1)
        await pipeline.decodeAhead(notBeforeMs: onsetMs)
        await pipeline.decodeWhileStarting(true)
        try await send(through: decidedMs)
        await pipeline.decodeWhileStarting(false)
        await pipeline.reportPartials(everyFrames: nil)
        if let again { await pipeline.decodeAgain(fromMs: again.fromMs) { again.samples(of: $0) } }
        try await send(through: Int.max)
        await capture.send(.finished)
        let finals = await collected.value
        await pipeline.stop()
        let open = finals.first { $0.audioStartMs <= decidedMs && $0.closedAtMs >= decidedMs }
            ?? finals.first { $0.endMs > userStartMs }
        return open?.hypothesis.text ?? ""
    }
}

/// A capture the replay speaks into frame by frame.
private actor ReplayedCapture: AudioCaptureDevice {
    private var continuation: AsyncStream<CaptureEvent>.Continuation?
    func start() async throws -> AsyncStream<CaptureEvent> {
        let (stream, c) = AsyncStream.makeStream(of: CaptureEvent.self)
        continuation = c
        return stream
    }
    func stop() async { continuation?.finish() }
    func send(_ event: CaptureEvent) { continuation?.yield(event) }
}

extension OpenClawTalk.Bench.Aec {
    /// `--replay DIR --local-words`: see `LocalWordsReplay`.
    func replayLocalWords(_ folder: String) async throws {
        let replay = try LocalWordsReplay(options: options, decisionMs: decisionMs, grammar: grammar)
        let folders = ReleasedWordsReplay.recordings(folder)
        let report = try await replay.run(folders: folders)
        if reporting.json {
            print(try BenchReportOptions.encoded(report))
            return
        }
        print("Local words of \(folders.count) recording\(folders.count == 1 ? "" : "s") under \(folder) (barge-in \(decisionMs) ms after the user's start\(grammar.map { ", grammar \($0)" } ?? ""))")
        for (i, session) in report.sessions.enumerated() {
            let place = session.userStartMs.map { "user \($0) ms, onset \(session.onsetMs.map(String.init) ?? "-"), from \(session.fromMs ?? 0)" } ?? "no user found"
            print("  \((session.recording as NSString).lastPathComponent): \(place)")
            for v in report.variants where i < v.heard.count { print("    \(v.wer[i])  \(v.heard[i])  (\(v.name))") }
        }
        for v in report.variants {
            print("  \(v.name): with words \(v.withWords) of \(v.heard.count), 'go' first \(v.goFirst), exact \(v.exact), mean WER \(v.meanWER)")
        }
    }
}
