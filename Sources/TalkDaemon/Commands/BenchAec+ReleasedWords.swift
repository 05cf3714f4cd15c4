import AudioIO
import Foundation
import SpeechRecognition
import TalkBench
import TalkSession

/// `bench aec --replay DIR --released-words`: the words a recorded barge-in session's held utterance would send, as
/// the transcription relay gets them (`HeldUtteranceRelease`), with and without the linear stage's output around the
/// user's onset, each recognised by a recogniser of its own as `bench talk` judges a relay turn. DIR is one recording
/// or a folder of them (a row's `--record` folder: `bargein-N`).
///
/// The recording has no session events, so the release is rebuilt from its audio: the user's clip
/// (`goforward.raw`, as `bench talk` plays it) is found in the raw capture after the reply's first sound (the
/// question before it is the same clip); the gate's sound onsets are the cleaned frames through `SpeechEnergy`, the
/// microphone open; the barge-in is taken `decisionMs` after the user's start (the live p50); the release's onset is
/// `TurnTaking.userOnsetMs(of:heardAsEcho:)` of the onsets heard by then, judged by the frames heard by then as the
/// relay's release judges them (`HeldUtteranceRelease.heardAsEcho`, each frame's echo shares as replayed); the
/// utterance's audio runs to the clip's end plus the endpointer's silence. The utterance's own start is taken to be before the release (its pre-roll is 400 ms).
struct ReleasedWordsReplay {
    struct Variant: Codable {
        var linearBeforeOnsetMs: Int
        var linearAfterOnsetMs: Int
        var withWords = 0
        var goFirst = 0
        var heard: [String] = []
        var wer: [Double] = []
    }

    struct Session: Codable {
        var recording: String
        var userStartMs: Int?
        var correlation: Double?
        var onsetMs: Int?
        var fromMs: Int?
    }

    struct Report: Codable {
        var decisionMs: Int
        var sessions: [Session] = []
        var variants: [Variant]
    }

    static let clipPath = OpenClawTalk.Bench.Aec.speechFolder + "/goforward.raw"
    static let spoken = "go forward ten meters"
    /// The endpointer's silence after the last word: the relay hears it too.
    static let silenceAfterMs = 700

    let options: EchoCancellerOptions
    let decisionMs: Int
    let clip: [Int16]

    init(options: EchoCancellerOptions, decisionMs: Int) throws {
        self.options = options
        self.decisionMs = decisionMs
        clip = try AudioFileReader.readMono(path: Self.clipPath).samples
    }

    /// The recordings under `folder`: itself, or its subfolders holding one (sorted by trial number).
    static func recordings(_ folder: String) -> [String] {
        let manager = FileManager.default
        if manager.fileExists(atPath: folder + "/capture.wav") { return [folder] }
        let names = (try? manager.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { manager.fileExists(atPath: folder + "/" + $0 + "/capture.wav") }
            .sorted { (Int($0.split(separator: "-").last ?? "") ?? 0, $0) < (Int($1.split(separator: "-").last ?? "") ?? 0, $1) }
            .map { folder + "/" + $0 }
    }

    func run(folders: [String], variants pairs: [(Int, Int)]) async throws -> Report {
        let landed = HeldUtteranceRelease.Settings()
        let pairs = pairs.isEmpty ? [(landed.linearBeforeOnsetMs, landed.linearAfterOnsetMs)] : pairs
        var report = Report(decisionMs: decisionMs, variants: ([(0, 0)] + pairs).map { Variant(linearBeforeOnsetMs: $0.0, linearAfterOnsetMs: $0.1) })
        for folder in folders {
            let recording = try EchoCaptureRecording(folder: folder)
            let replay = try recording.replay(options: options)
            var session = Session(recording: folder)
            defer { report.sessions.append(session) }
            guard let (start, score) = userStart(raw: recording.raw, far: recording.far) else { continue }
            session.userStartMs = start * 1000 / AudioFrame.sampleRate
            session.correlation = (score * 100).rounded() / 100
            let frames = Self.frames(replay)
            let decided = session.userStartMs! + decisionMs
            let onsets = Self.onsets(frames).filter { $0 + SpeechEnergy.onsetFrames * AudioFrame.durationMs <= decided }
            let heard = frames.prefix { $0.streamPositionMs + AudioFrame.durationMs <= decided }
            let onset = TurnTaking.userOnsetMs(of: onsets) { HeldUtteranceRelease.heardAsEcho(onsetMs: $0, frames: heard) }
            session.onsetMs = onset
            let endMs = session.userStartMs! + Self.voicedMs(clip) + Self.silenceAfterMs
            for v in report.variants.indices {
                var settings = HeldUtteranceRelease.Settings()
                settings.linearBeforeOnsetMs = report.variants[v].linearBeforeOnsetMs
                settings.linearAfterOnsetMs = report.variants[v].linearAfterOnsetMs
                let release = HeldUtteranceRelease(startMs: 0, onsetMs: onset ?? session.userStartMs!, heardThroughMs: decided, settings: settings)
                session.fromMs = release.fromMs
                let sent = frames.filter { $0.streamPositionMs >= release.fromMs && $0.streamPositionMs < endMs }.flatMap(release.samples(of:))
                let words = try await Self.words(sent)
                let said = TranscriptNormalizer.words(Self.spoken)
                let rate = WordErrors.between(reference: said, hypothesis: TranscriptNormalizer.words(words)).rate
                report.variants[v].heard.append(words)
                report.variants[v].wer.append((rate * 100).rounded() / 100)
                if rate <= 0.25 { report.variants[v].withWords += 1 }
                if TranscriptNormalizer.words(words).first == said.first { report.variants[v].goFirst += 1 }
            }
        }
        return report
    }

    /// The replayed capture as the frames the relay's ring would hold.
    static func frames(_ replay: EchoCaptureRecording.Replay) -> [AudioFrame] {
        let n = AudioFrame.samplesPerFrame
        return (0..<replay.cleaned.count / n).map { i in
            var frame = AudioFrame(sequence: UInt64(i), captureTimeNs: 0, samples: Array(replay.cleaned[i * n..<(i + 1) * n]))
            frame.linearSamples = Array(replay.linear[i * n..<(i + 1) * n])
            if i < replay.explained.count { frame.echoExplained = replay.explained[i] }
            if i < replay.explainedClosely.count { frame.echoExplainedClosely = replay.explainedClosely[i] }
            return frame
        }
    }

    /// The gate's sound onsets (`MicrophoneGate`): stream ms of each run's first loud frame.
    static func onsets(_ frames: [AudioFrame]) -> [Int] {
        var energy = SpeechEnergy()
        var loud = 0
        var onsets: [Int] = []
        for frame in frames {
            loud = energy.add(frame.samples, sequence: frame.sequence) ? loud + 1 : 0
            if loud == SpeechEnergy.onsetFrames { onsets.append((Int(frame.sequence) + 1 - SpeechEnergy.onsetFrames) * AudioFrame.durationMs) }
        }
        return onsets
    }

    /// The clip's first voiced sample (its first 20 ms over RMS 300) and how long it speaks from there.
    static func voicedStart(_ clip: [Int16]) -> Int {
        let n = AudioFrame.samplesPerFrame
        return stride(from: 0, to: clip.count - n, by: n).first { AudioLevel.rms(Array(clip[$0..<$0 + n])) >= 300 } ?? 0
    }

    static func voicedMs(_ clip: [Int16]) -> Int { (clip.count - voicedStart(clip)) * 1000 / AudioFrame.sampleRate }

    /// Where (sample) the clip's first voiced sample lies in the raw capture after the reply's first sound: the
    /// best normalised correlation of its first 600 ms, on both signals averaged down by 8 (2 kHz), and that score.
    func userStart(raw: [Int16], far: [Int16]) -> (Int, Double)? {
        let step = 8
        guard let replyStart = far.firstIndex(where: { abs(Int($0)) > 64 }) else { return nil }
        let voiced = Self.voicedStart(clip)
        let template = Self.decimated(Array(clip[voiced..<min(clip.count, voiced + AudioFrame.sampleRate * 6 / 10)]), by: step)
        let signal = Self.decimated(raw, by: step)
        let first = replyStart / step
        guard signal.count > first + template.count else { return nil }
        let templateNorm = sqrt(template.reduce(0) { $0 + $1 * $1 })
        var windowEnergy = signal[first..<first + template.count].reduce(0) { $0 + $1 * $1 }
        var best = (lag: first, score: -1.0)
        for lag in first...(signal.count - template.count) {
            if lag > first {
                let gone = signal[lag - 1], came = signal[lag + template.count - 1]
                windowEnergy += came * came - gone * gone
            }
            var dot = 0.0
            for k in 0..<template.count { dot += template[k] * signal[lag + k] }
            let score = dot / max(1e-9, templateNorm * sqrt(max(windowEnergy, 1e-9)))
            if score > best.score { best = (lag, score) }
        }
        return (best.lag * step, best.score)
    }

    static func decimated(_ samples: [Int16], by step: Int) -> [Double] {
        stride(from: 0, to: samples.count - step + 1, by: step).map { i in
            var sum = 0.0
            for k in 0..<step { sum += Double(samples[i + k]) }
            return sum / Double(step)
        }
    }

    /// What a fresh dictation recogniser makes of `samples` as one utterance (`RelayUserTurn`).
    static func words(_ samples: [Int16]) async throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("released-\(UUID().uuidString).wav").path
        try WAVAudio(PCMBuffer(sampleRate: AudioFrame.sampleRate, samples: samples)).write(path: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await RelayUserTurn(audio: path).words(grammar: nil)
    }
}
