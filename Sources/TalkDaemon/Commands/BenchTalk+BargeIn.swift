import AudioIO
import Foundation
import SessionBridge
import SpeechRecognition
import TalkBench

/// Live barge-in trials of `bench talk`: the user speaks over the reply on the loopback (the clip played into the
/// sink 1.5 s into the reply, mixed there with it and heard on the source), as `RunLoopbackTests` does once.
struct LiveBargeInFigures {
    var trials = 0
    /// Trials in which the reply was cut off.
    var stopped = 0
    /// ... and the Gateway got the user's words (WER ≤ `werTarget` after the interruption prefix).
    var withWords = 0
    var wer: [Double] = []
    /// From the start of the user's speech (the clip's first voiced frame, as handed to the sink) to the decision.
    var detectionMs: [Double] = []
    var noReply = 0

    static let werTarget = 0.25
    /// The user starts this long into the session's first sentence.
    static let userAfter: Duration = .milliseconds(1500)

    var json: JSONValue {
        func list(_ values: [Double]) -> JSONValue { .array(values.map { .double(($0 * 100).rounded() / 100) }) }
        return [
            "trials": .int(Int64(trials)), "stopped": .int(Int64(stopped)), "withWords": .int(Int64(withWords)),
            "noReply": .int(Int64(noReply)), "recall": trials > 0 ? .double(Double(withWords) / Double(trials)) : .null,
            "wer": list(wer), "detectionMs": TalkBenchReport.summary(detectionMs), "detectionSamplesMs": list(detectionMs),
        ]
    }

    var text: String {
        let p50 = BenchStatistics.percentile(detectionMs, 0.5).map { String(format: "%.0f", $0) } ?? "-"
        let p95 = BenchStatistics.percentile(detectionMs, 0.95).map { String(format: "%.0f", $0) } ?? "-"
        let meanWER = wer.isEmpty ? "-" : String(format: "%.2f", wer.reduce(0, +) / Double(wer.count))
        return "  barge-in over the reply: stopped it in \(stopped) of \(trials), with the user's words (WER <= \(Self.werTarget)) in \(withWords); "
            + "mean WER \(meanWER); detection from the user's first word p50 \(p50) ms, p95 \(p95) ms"
            + (noReply > 0 ? " (\(noReply) without a reply)" : "")
    }
}

extension OpenClawTalk.Bench.Talk {
    static let clipSpoken = "go forward ten meters"

    /// `trials` sessions in which the user's clip, after the first turn's reply starts, is played again over it.
    static func bargeInTrials(
        _ trials: Int, plan: LivePlan, speaker: PulsePlayback, clip: PCMBuffer, gateway: ReferenceGatewayProcess
    ) async throws -> LiveBargeInFigures {
        var figures = LiveBargeInFigures()
        // Where the clip's speech starts: its first frame over the loopback tests' voiced level.
        let onsetSeconds = Double(firstVoicedSample(clip.samples)) / Double(clip.sampleRate)
        for trial in 0..<trials {
            let home = "\(plan.folder)/bargein-\(trial)"
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            let child = try plan.session(home: home, aec: "webrtc", gateway: gateway, record: "bargein-\(trial)")
            guard await child.waitFor(#""to":"listening""#, upTo: .seconds(60)) else {
                await child.stop()
                throw ValidationError("the live session did not start: \(child.stderr.suffix(600))")
            }
            let before = try transcriptCount(gateway)
            try await Task.sleep(for: .milliseconds(1500))
            _ = try await speaker.play(clip)
            figures.trials += 1
            guard await child.waitFor(#""event":"speakingStarted""#, upTo: .seconds(30)) else {
                figures.noReply += 1
                await child.stop()
                continue
            }
            try await Task.sleep(for: LiveBargeInFigures.userAfter)
            let userStarted = Date().addingTimeInterval(onsetSeconds)
            _ = try await speaker.play(clip)
            _ = await child.waitFor(#""event":"transcriptSent""#, count: 2, upTo: .seconds(20))
            try await Task.sleep(for: .milliseconds(500))
            await child.stop()
            let events = child.events
            guard let bargeIn = events.first(where: { $0["event"] == "bargeIn" }) else { continue }
            figures.stopped += 1
            if let time = bargeIn["time"]?.stringValue, let decided = eventTime(time) {
                figures.detectionMs.append(decided.timeIntervalSince(userStarted) * 1000)
            }
            let messages = try transcripts(gateway).dropFirst(before + 1)
            guard let message = messages.first else { continue }
            let words = message.replacing(#/^Assistant speech interrupted at [0-9.]+s\.\n\n/#, with: "")
            let wer = WordErrors.between(
                reference: TranscriptNormalizer.words(clipSpoken), hypothesis: TranscriptNormalizer.words(words)).rate
            figures.wer.append(wer)
            if wer <= LiveBargeInFigures.werTarget { figures.withWords += 1 }
        }
        return figures
    }

    static func transcripts(_ gateway: ReferenceGatewayProcess) throws -> [String] {
        (try gateway.control("chat-transcripts")["transcripts"]?.arrayValue ?? []).compactMap { $0["message"]?.stringValue }
    }

    static func transcriptCount(_ gateway: ReferenceGatewayProcess) throws -> Int { try transcripts(gateway).count }

    static func eventTime(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// The first sample of the first 20 ms frame louder than speech's quietest (RMS 300).
    static func firstVoicedSample(_ samples: [Int16]) -> Int {
        let frame = AudioFrame.samplesPerFrame
        return stride(from: 0, to: max(0, samples.count - frame), by: frame).first { start in
            (samples[start..<start + frame].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(frame)).squareRoot() > 300
        } ?? 0
    }
}
