import AudioIO
import Foundation

extension OpenClawTalk.Bench.Aec {
    /// What `--replay` prints with `--json`.
    struct ReplayReport: Encodable {
        var recording: String
        var seconds: Double
        var playingSeconds: Double
        var linearStageMs: Int
        var openings: [EchoCaptureRecording.Opening]
    }

    /// `bench aec --replay DIR`: the recorded capture through a fresh canceller, and when the double-talk
    /// detector took it for the user over the echo. In a recording of the reply alone every opening is a false
    /// one, the kind that lets the reply cut itself off.
    func replayRecording(_ folder: String) throws {
        let recording = try EchoCaptureRecording(folder: folder)
        let result = try recording.replay(options: options)
        if let output {
            try WAVAudio(PCMBuffer(sampleRate: AudioFrame.sampleRate, samples: result.cleaned)).write(path: output)
        }
        let frameSeconds = Double(AudioFrame.durationMs) / 1000
        let report = ReplayReport(
            recording: folder, seconds: Double(recording.frames) * frameSeconds,
            playingSeconds: Double(result.playingFrames) * frameSeconds, linearStageMs: options.linearStageMs,
            openings: result.openings)
        if reporting.json {
            print(try BenchReportOptions.encoded(report))
            return
        }
        print(String(format: "Replayed %@: %.1f s, something playing for %.1f s (linear stage %d ms)",
                     folder, report.seconds, report.playingSeconds, report.linearStageMs))
        print("  user heard over the echo: \(report.openings.count) time\(report.openings.count == 1 ? "" : "s")")
        for o in report.openings {
            let judged = o.linearDb.map { db in "linear stage \(db) dB" + (o.echoOnlyDb.map { " against echo alone \($0) dB" } ?? "") } ?? ""
            print(String(format: "    %7.2f s to %7.2f s  ", Double(o.startMs) / 1000, Double(o.endMs) / 1000) + judged)
        }
    }

    /// `--replay DIR --released-words`: see `ReleasedWordsReplay`.
    func replayReleasedWords(_ folder: String) async throws {
        let replay = try ReleasedWordsReplay(options: options, decisionMs: decisionMs)
        let folders = ReleasedWordsReplay.recordings(folder)
        let report = try await replay.run(folders: folders, variants: releaseLinear)
        if reporting.json {
            print(try BenchReportOptions.encoded(report))
            return
        }
        print("Released words of \(folders.count) recording\(folders.count == 1 ? "" : "s") under \(folder) (barge-in \(decisionMs) ms after the user's start)")
        for (i, session) in report.sessions.enumerated() {
            let place = session.userStartMs.map { "user \($0) ms (r \(session.correlation ?? 0)), onset \(session.onsetMs.map(String.init) ?? "-"), from \(session.fromMs ?? 0)" } ?? "no user found"
            print("  \((session.recording as NSString).lastPathComponent): \(place)")
            for v in report.variants where i < v.heard.count {
                print("    \(v.linearBeforeOnsetMs):\(v.linearAfterOnsetMs)  \(v.wer[i])  \(v.heard[i])")
            }
        }
        for v in report.variants {
            print("  linear \(v.linearBeforeOnsetMs) ms before to \(v.linearAfterOnsetMs) ms after the onset: with words \(v.withWords) of \(v.heard.count), 'go' first \(v.goFirst)")
        }
    }
}
