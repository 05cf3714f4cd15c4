import AudioIO
import Foundation
import TalkSession

/// `bench aec --replay DIR --evidence`: recorded sessions of `bench talk` (barge-in `bargein-N`, self-echo `webrtc-N`)
/// through the native loop's barge-in evidence (`BargeInEvidenceReplay`), once per settling window (`--settling-ms`;
/// 0: frames after a playback gap or a reference move count as any other). Where the evidence would first let words
/// over the reply stop it: before the user's start (or, in a recording of the reply alone, anywhere in the reply) the
/// reply cutting itself off; after it, the evidence's detection. Gaps come from `frames.tsv`, or for a loopback
/// recording made before it held them, from the capture's digital silence (`EchoCaptureRecording.inferredGaps`).
struct EvidenceReplayReport: Codable {
    struct Session: Codable {
        var recording: String
        var replyStartMs: Int?
        var replyEndMs: Int?
        var userStartMs: Int?
        /// Where gaps were announced (recorded) or found (inferred), and the reference moved, in stream ms.
        var gapsMs: [Int] = []
        var gapsInferred = false
        var movesMs: [Int] = []
        /// Per variant: where the evidence first allowed words in each stretch of sound.
        var allowedMs: [[Int]] = []
    }

    struct Variant: Codable {
        var settlingMs: Int
        var cutItself = 0
        var stopped = 0
        /// Barge-ins whose reply (as recorded: the live session cut it) ended before the evidence allowed the user.
        var notBeforeReplyEnd = 0
        var detectionMs: [Int] = []
    }

    var sessions: [Session] = []
    var variants: [Variant]
}

extension OpenClawTalk.Bench.Aec {
    func replayEvidence(_ folder: String) async throws {
        let words = try ReleasedWordsReplay(options: options, decisionMs: decisionMs)
        var report = EvidenceReplayReport(variants: settlingMs.map { EvidenceReplayReport.Variant(settlingMs: $0) })
        let folders = ReleasedWordsReplay.recordings(folder)
        for path in folders {
            let recording = try EchoCaptureRecording(folder: path)
            let replay = try recording.replay(options: options)
            var session = EvidenceReplayReport.Session(recording: path)
            defer { report.sessions.append(session) }
            guard let first = recording.far.firstIndex(where: { abs(Int($0)) > 64 }),
                  let last = recording.far.lastIndex(where: { abs(Int($0)) > 64 }) else { continue }
            let startMs = first * 1000 / AudioFrame.sampleRate
            let endMs = last * 1000 / AudioFrame.sampleRate
            session.replyStartMs = startMs
            session.replyEndMs = endMs
            let gaps = recording.gapsRecorded ? recording.gaps : recording.inferredGaps()
            session.gapsInferred = !recording.gapsRecorded
            session.gapsMs = gaps.indices.filter { gaps[$0] }.map { $0 * AudioFrame.durationMs }
            session.movesMs = recording.movedFrames.map { $0 * AudioFrame.durationMs }
            let isBargeIn = (path as NSString).lastPathComponent.hasPrefix("bargein")
            var userMs: Int?
            if isBargeIn, let (start, _) = words.userStart(raw: recording.raw, far: recording.far) {
                userMs = start * 1000 / AudioFrame.sampleRate
            }
            session.userStartMs = userMs
            let frames = ReleasedWordsReplay.frames(replay)
            for v in report.variants.indices {
                let settling = recording.settlingFrames(windowMs: report.variants[v].settlingMs, gaps: gaps)
                var evidence = BargeInEvidenceReplay()
                for var frame in frames {
                    let i = Int(frame.sequence)
                    frame.echoSettling = i < settling.count && settling[i]
                    evidence.hear(frame, replyPlays: frame.streamPositionMs >= startMs && frame.streamPositionMs <= endMs)
                }
                session.allowedMs.append(evidence.allowedMs)
                let before = evidence.allowedMs.first { $0 < (isBargeIn ? (userMs ?? Int.max) : Int.max) }
                if before != nil, isBargeIn ? userMs != nil : true {
                    report.variants[v].cutItself += 1
                } else if let userMs {
                    if let at = evidence.allowedMs.first(where: { $0 >= userMs }) {
                        report.variants[v].stopped += 1
                        report.variants[v].detectionMs.append(at - userMs)
                    } else {
                        report.variants[v].notBeforeReplyEnd += 1
                    }
                }
            }
        }
        if reporting.json {
            print(try BenchReportOptions.encoded(report))
            return
        }
        print("Barge-in evidence of \(folders.count) recording\(folders.count == 1 ? "" : "s") under \(folder)")
        for s in report.sessions {
            let gaps = s.gapsMs.map(String.init).joined(separator: ",")
            print("  \((s.recording as NSString).lastPathComponent): reply \(s.replyStartMs ?? -1)-\(s.replyEndMs ?? -1), user \(s.userStartMs.map(String.init) ?? "-"),"
                + " gaps\(s.gapsInferred ? " (inferred)" : "") \(gaps.isEmpty ? "-" : gaps), moves \(s.movesMs.isEmpty ? "-" : s.movesMs.map(String.init).joined(separator: ","))")
            for (v, allowed) in s.allowedMs.enumerated() {
                print("    settling \(report.variants[v].settlingMs) ms: allowed at \(allowed.isEmpty ? "-" : allowed.map(String.init).joined(separator: ","))")
            }
        }
        for v in report.variants {
            let det = v.detectionMs.sorted()
            let p50 = det.isEmpty ? -1 : det[det.count / 2]
            let p95 = det.isEmpty ? -1 : det[min(det.count - 1, Int((Double(det.count) * 0.95).rounded(.up)) - 1)]
            print("  settling \(v.settlingMs) ms: cut itself \(v.cutItself), user's evidence \(v.stopped) (p50 \(p50), p95 \(p95) ms),"
                + " not before the recorded reply's end \(v.notBeforeReplyEnd)")
        }
    }
}
