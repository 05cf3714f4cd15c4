import Foundation

/// Collects what a live `EchoCancellingCapture` fed its stages, frame by frame: the raw capture, the reference
/// as placed for it, how loud the reference was around it, and where the placement moved. Written to a folder
/// (`openclaw-talk run` with `OPENCLAW_TALK_AEC_RECORD=DIR`), it is replayed by `EchoCaptureRecording` through
/// the same stages, as often as wanted, with the same result: a rare failure seen once on a loudspeaker (the
/// reply cutting itself off) can be studied and a change to the stages checked against it, where a live rerun
/// would not meet the same timing again.
struct EchoCaptureRecorder {
    enum Mark: String {
        case none = "-"
        /// The reference was moved before this frame (`EchoFrameProcessor.relearn()`).
        case moved
        /// The device was interrupted or resumed before this frame (`EchoFrameProcessor.restart()`).
        case restarted
    }

    /// Ten minutes at most (about 40 MB in memory): a daemon left running with it set must not grow forever.
    static let maxFrames = 30_000

    private var interleaved: [Float] = []
    private var lines: [String] = []
    private(set) var frames = 0
    /// Frames not recorded past `maxFrames`: the recording is the session's first ten minutes only.
    private(set) var framesDropped = 0

    /// `gap`: the playback side announced a gap in what the speaker played before this frame (`EchoReference.gaps`);
    /// `movedNs`: the aligner moved the reference by this much (read that much later) before it.
    mutating func append(raw: [Int16], far: [Int16], playedAround: Double, mark: Mark, gap: Bool = false, movedNs: Int64? = nil) {
        // Appended without `reserveCapacity`: reserving just the next frame's room reallocates (and copies the whole
        // recording) every frame, on the canceller's realtime thread; appends grow the storage geometrically.
        guard frames < Self.maxFrames, raw.count == far.count else {
            framesDropped += 1
            return
        }
        for (r, f) in zip(raw, far) {
            interleaved.append(Float(r) / 32768)
            interleaved.append(Float(f) / 32768)
        }
        // In full: Swift writes the shortest decimal that reads back to the same Double. The suppressor scales
        // its expected residual by this level, so a rounded one could tip its judgement in the replay.
        lines.append("\(playedAround)\t\(mark.rawValue)\t\(gap ? 1 : 0)\t\(movedNs.map { "\(Double($0) / 1_000_000)" } ?? "-")")
        frames += 1
    }

    /// Writes `capture.wav` (two channels: the raw capture, the reference) and `frames.tsv` (per frame: the played level,
    /// the mark, whether a gap was announced, the move in ms or "-") into `folder`,
    /// private to the user (0700, files 0600): it holds what the microphone heard.
    func write(to folder: String) throws {
        let manager = FileManager.default
        // Encoded before the folder is made: the folder stands empty no longer than the files take to write.
        let wav = WAVAudio(sampleRate: AudioFrame.sampleRate, channels: 2, samples: interleaved).encoded()
        let table = Data(([EchoCaptureRecording.header] + lines).joined(separator: "\n").utf8 + [0x0a])
        try manager.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for (name, data) in [(EchoCaptureRecording.audioFile, wav), (EchoCaptureRecording.framesFile, table)] {
            let path = folder + "/" + name
            try? manager.removeItem(atPath: path)
            guard manager.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600]) else {
                throw WAVError.unwritable(path: path, reason: "it could not be created")
            }
        }
    }
}

/// A capture recorded by `EchoCaptureRecorder`, replayed through a fresh canceller and the stages after it.
package struct EchoCaptureRecording: Sendable {
    static let audioFile = "capture.wav"
    static let framesFile = "frames.tsv"
    /// `frames.tsv`'s first line. Recordings made before the gap and move columns have only the first two; they replay
    /// with no gap known (`gapsRecorded`).
    static let header = "playedAround\tmark\tgap\tmovedMs"

    /// A stretch in which the double-talk detector said the user spoke over the echo; times from the start of
    /// the recording.
    package struct Opening: Sendable, Equatable, Codable {
        package var startMs: Int
        package var endMs: Int
        /// The judgement that opened it: the linear stage's output against the raw capture, and the echo-only
        /// level it was compared with, in dB.
        package var linearDb: Double?
        package var echoOnlyDb: Double?
    }

    package struct Replay: Sendable {
        package var openings: [Opening]
        /// What the capture would have passed on.
        package var cleaned: [Int16]
        /// What the linear stage alone left (`AudioFrame.linearSamples`), sample for sample beside `cleaned`.
        package var linear: [Int16]
        /// Per frame, how much of it the reference explains (`AudioFrame.echoExplained`, `echoExplainedClosely`).
        package var explained: [Float?] = []
        package var explainedClosely: [Float?] = []
        /// Frames in which a reference sound was around.
        package var playingFrames: Int
    }

    package let raw: [Int16]
    package let far: [Int16]
    let playedAround: [Double]
    let marks: [EchoCaptureRecorder.Mark]
    /// Per frame: a gap in what the speaker played was announced before it.
    package let gaps: [Bool]
    /// Per frame: the aligner moved the reference by this many ms before it (nil: no move, or not recorded).
    package let movedMs: [Double?]
    /// Whether the recording holds the gap and move columns (false: made before them; `gaps` is all false).
    package let gapsRecorded: Bool

    package var frames: Int { playedAround.count }

    /// Reads a folder written by `EchoCaptureRecorder`.
    /// - Throws: `WAVError` for an unreadable or malformed recording, with what is wrong.
    package init(folder: String) throws {
        let audioPath = folder + "/" + Self.audioFile
        let audio = try WAVAudio.read(path: audioPath)
        guard audio.channels == 2, audio.sampleRate == AudioFrame.sampleRate else {
            throw WAVError.invalidFormat(path: audioPath, reason: "a recording has 2 channels at 16000 Hz, this \(audio.channels) at \(audio.sampleRate) Hz")
        }
        let framesPath = folder + "/" + Self.framesFile
        guard let table = try? String(contentsOfFile: framesPath, encoding: .utf8) else {
            throw WAVError.unreadable(path: framesPath, reason: "no frame table beside the audio")
        }
        var played: [Double] = []
        var marks: [EchoCaptureRecorder.Mark] = []
        var gaps: [Bool] = []
        var moved: [Double?] = []
        let lines = table.split(separator: "\n")
        let columns = lines.first.map { $0.split(separator: "\t").count } ?? 0
        for line in lines.dropFirst() {
            let fields = line.split(separator: "\t")
            guard fields.count == columns, columns == 2 || columns == 4, let level = Double(fields[0]),
                let mark = EchoCaptureRecorder.Mark(rawValue: String(fields[1])),
                columns == 2 || (fields[2] == "0" || fields[2] == "1") && (fields[3] == "-" || Double(fields[3]) != nil)
            else {
                throw WAVError.invalidFormat(path: framesPath, reason: "line \(played.count + 2) is not 'level<TAB>mark[<TAB>gap<TAB>movedMs]': \(line.prefix(80))")
            }
            played.append(level)
            marks.append(mark)
            gaps.append(columns == 4 && fields[2] == "1")
            moved.append(columns == 4 ? Double(fields[3]) : nil)
        }
        guard played.count * AudioFrame.samplesPerFrame == audio.frameCount else {
            throw WAVError.invalidFormat(path: framesPath, reason: "\(played.count) frames listed, the audio holds \(audio.frameCount / AudioFrame.samplesPerFrame)")
        }
        raw = stride(from: 0, to: audio.samples.count, by: 2).map { floatToInt16(audio.samples[$0]) }
        far = stride(from: 1, to: audio.samples.count, by: 2).map { floatToInt16(audio.samples[$0]) }
        playedAround = played
        self.marks = marks
        self.gaps = gaps
        movedMs = moved
        gapsRecorded = columns == 4
    }

    /// The frames before which the aligner moved the reference (`moved` marks).
    package var movedFrames: [Int] { marks.indices.filter { marks[$0] == .moved } }

    /// Per frame, whether it lies within the settling window (`EchoSettlingWindow`) after an announced gap (`gaps`, or
    /// `inferredGaps` for a recording made before they were recorded) or a move of the reference (a `moved` mark).
    package func settlingFrames(windowMs: Int? = nil, gaps: [Bool]? = nil) -> [Bool] {
        let gaps = gaps ?? self.gaps
        return EchoSettlingWindow.frames(frames, windowMs: windowMs) { gaps[$0] || marks[$0] == .moved }
    }

    /// Where a recording made on a loopback sink without the gap column had its playback gaps: the first frame of the
    /// sink's digital silence (every sample within ±`gapSilence`) while the reference plays and played through the
    /// 60 ms before (an echo lags its reference by 15 to 140 ms, so silence at a sound's start is not one). What the
    /// live capture was told comes near it: the server reports an underrun as the sink runs dry. Not for a room's
    /// microphone, which never hears digital silence.
    package func inferredGaps() -> [Bool] {
        let n = AudioFrame.samplesPerFrame
        let playing = (0..<frames).map { AudioLevel.rms(Array(far[$0 * n..<($0 + 1) * n])) >= EchoTuning.Residual.playingRMS }
        let silent = (0..<frames).map { i in raw[i * n..<(i + 1) * n].allSatisfy { abs(Int($0)) <= Self.gapSilence } }
        let before = Self.gapPlayingBeforeFrames
        return (0..<frames).map { i in
            i >= before && silent[i] && !silent[i - 1] && (i - before...i).allSatisfy { playing[$0] }
        }
    }

    /// `inferredGaps`: a sample this close to 0 is silence; the reference played these frames (60 ms) before it.
    static let gapSilence = 2
    static let gapPlayingBeforeFrames = 3

    /// Runs the recording through a fresh canceller with `options` and the stages after it.
    /// - Throws: `EchoCancelError` for options the canceller refuses.
    package func replay(options: EchoCancellerOptions = EchoCancellerOptions()) throws -> Replay {
        var processor = EchoFrameProcessor(try EchoCanceller(options: options))
        var result = Replay(openings: [], cleaned: [], linear: [], playingFrames: 0)
        result.cleaned.reserveCapacity(raw.count)
        result.linear.reserveCapacity(raw.count)
        let n = AudioFrame.samplesPerFrame
        for i in 0..<frames {
            switch marks[i] {
            case .moved: processor.relearn()
            case .restarted: processor.restart()
            case .none: break
            }
            if playedAround[i] >= EchoTuning.Residual.playingRMS { result.playingFrames += 1 }
            let outcome = try processor.process(
                raw: Array(raw[i * n..<(i + 1) * n]), far: Array(far[i * n..<(i + 1) * n]), playedAround: playedAround[i])
            result.cleaned += outcome.samples
            result.linear += outcome.linear
            result.explained.append(outcome.echoExplained.map(Float.init))
            result.explainedClosely.append(outcome.echoExplainedClosely.map(Float.init))
            let ms = i * AudioFrame.durationMs
            if outcome.changed, outcome.userOverEcho {
                let judged = processor.lastJudgement
                result.openings.append(Opening(
                    startMs: ms, endMs: ms, linearDb: judged.map { Self.decibels($0.ratio) },
                    echoOnlyDb: judged?.echoOnly.map(Self.decibels)))
            }
            if outcome.userOverEcho, !result.openings.isEmpty { result.openings[result.openings.count - 1].endMs = ms + AudioFrame.durationMs }
        }
        return result
    }

    private static func decibels(_ ratio: Double) -> Double {
        ((10 * log10(max(ratio, 1e-12))) * 10).rounded() / 10
    }
}
