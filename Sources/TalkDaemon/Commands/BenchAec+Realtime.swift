import AudioIO
import Foundation
import SpeechRecognition
import TalkBench
import TalkSession

/// `bench aec --replay DIR --realtime`: recorded sessions of `bench talk --mode realtime` (a barge-in row's
/// `bargein-N`, a self-echo row's `webrtc-N`) through the realtime session's uplink (`RealtimeUplinkReplay`): when the
/// reply was lowered, the gate opened, the relay's VAD heard speech start (its clear stops the answer) and the client's
/// guard would have; and the words of the turn the relay commits from that speech start, as `bench talk` judges them.
/// The answer starts with the reference's first sound; the user's start is the clip found in the raw capture
/// (`ReleasedWordsReplay.userStart`), a barge-in's detection the cut from there.
struct RealtimeUplinkReplayReport: Codable {
    struct Session: Codable {
        var recording: String
        var answerStartMs: Int?
        var answerEndMs: Int?
        var userStartMs: Int?
        var correlation: Double?
        var trace: RealtimeUplinkReplay.Trace?
        var detectionMs: Int?
        var heard: String?
        var wer: Double?
        /// Self-echo: the answer cut while it played with no user in it.
        var cutItself = false
    }

    var sessions: [Session] = []
    var withWords = 0
    var goFirst = 0
    var stopped = 0
    var cutItself = 0
}

extension OpenClawTalk.Bench.Aec {
    func replayRealtime(_ folder: String) async throws {
        let words = try ReleasedWordsReplay(options: options, decisionMs: decisionMs)
        var report = RealtimeUplinkReplayReport()
        let folders = ReleasedWordsReplay.recordings(folder)
        for path in folders {
            let recording = try EchoCaptureRecording(folder: path)
            let replay = try recording.replay(options: options)
            var session = RealtimeUplinkReplayReport.Session(recording: path)
            defer { report.sessions.append(session) }
            let n = AudioFrame.samplesPerFrame
            guard let first = recording.far.firstIndex(where: { abs(Int($0)) > 64 }),
                  let last = recording.far.lastIndex(where: { abs(Int($0)) > 64 }) else { continue }
            let startMs = first * 1000 / AudioFrame.sampleRate
            session.answerStartMs = startMs
            session.answerEndMs = last * 1000 / AudioFrame.sampleRate
            let isBargeIn = (path as NSString).lastPathComponent.hasPrefix("bargein")
            var uplink = RealtimeUplinkReplay(answerStartMs: startMs)
            for i in 0..<replay.cleaned.count / n {
                var frame = AudioFrame(sequence: UInt64(i), captureTimeNs: 0, samples: Array(replay.cleaned[i * n..<(i + 1) * n]))
                frame.linearSamples = Array(replay.linear[i * n..<(i + 1) * n])
                frame.echoExplained = replay.explained[i]
                frame.echoExplainedClosely = replay.explainedClosely[i]
                uplink.hear(frame)
            }
            session.trace = uplink.trace
            guard isBargeIn else {
                if let cut = uplink.trace.cutMs, cut < session.answerEndMs! {
                    session.cutItself = true
                    report.cutItself += 1
                }
                continue
            }
            guard let (start, score) = words.userStart(raw: recording.raw, far: recording.far) else { continue }
            let userMs = start * 1000 / AudioFrame.sampleRate
            session.userStartMs = userMs
            session.correlation = (score * 100).rounded() / 100
            if let cut = uplink.trace.cutMs {
                if cut < userMs { session.cutItself = true; report.cutItself += 1 } else { report.stopped += 1 }
                session.detectionMs = cut - userMs
            }
            guard let from = uplink.trace.relaySpeechFromMs else { continue }
            let endMs = userMs + ReleasedWordsReplay.voicedMs(words.clip) + ReleasedWordsReplay.silenceAfterMs
            let samples = Array(uplink.sent[min(uplink.sent.count, from * 16)..<min(uplink.sent.count, endMs * 16)])
            let heard = try await ReleasedWordsReplay.words(samples)
            let said = TranscriptNormalizer.words(ReleasedWordsReplay.spoken)
            let rate = WordErrors.between(reference: said, hypothesis: TranscriptNormalizer.words(heard)).rate
            session.heard = heard
            session.wer = (rate * 100).rounded() / 100
            if rate <= 0.25 { report.withWords += 1 }
            if TranscriptNormalizer.words(heard).first == said.first { report.goFirst += 1 }
        }
        if reporting.json {
            print(try BenchReportOptions.encoded(report))
            return
        }
        print("Realtime uplink of \(folders.count) recording\(folders.count == 1 ? "" : "s") under \(folder)")
        func rel(_ ms: Int?, _ base: Int?) -> String { guard let ms else { return "-" }; return "\(ms - (base ?? 0))" }
        for s in report.sessions {
            let t = s.trace
            let base = s.userStartMs ?? s.answerStartMs
            print("  \((s.recording as NSString).lastPathComponent): answer \(s.answerStartMs ?? -1)-\(s.answerEndMs ?? -1), user \(s.userStartMs.map(String.init) ?? "-") (r \(s.correlation ?? 0))"
                + "  lowered \(rel(t?.loweredMs, base)) returned \(t?.levelReturnedMs.map { "\($0 - (base ?? 0))" }.joined(separator: ",") ?? "")"
                + " open \(rel(t?.gateOpenedMs, base)) relay \(rel(t?.relayHeardMs, base)) from \(rel(t?.relaySpeechFromMs, base))"
                + " guard \(rel(t?.guardMs, base)) linear \(t?.linearMs.map { "\($0 - (base ?? 0))" }.joined(separator: ":") ?? "")"
                + (s.cutItself ? "  CUT ITSELF" : "") + (s.heard.map { "  \(s.wer ?? 1)  \($0)" } ?? ""))
        }
        let det = report.sessions.compactMap { $0.cutItself ? nil : $0.detectionMs }.sorted()
        let p95 = det.isEmpty ? -1 : det[min(det.count - 1, Int((Double(det.count) * 0.95).rounded(.up)) - 1)]
        print("  stopped \(report.stopped), with words \(report.withWords), 'go' first \(report.goFirst), cut itself \(report.cutItself); detection p50 \(det.isEmpty ? -1 : det[det.count / 2]) p95 \(p95) ms")
    }
}
