import Foundation
import SessionBridge
import SpeechRecognition

/// The words heard of the user's clip in barge-in trials that stopped the reply, against what the clip says.
package struct HeardWords: Sendable, Equatable {
    /// Trials whose words are the user's: WER ≤ `LiveBargeInFigures.werTarget`.
    package var withWords = 0
    /// Trials whose words begin with the clip's first word ("go"): the word a barge-in's late onset clips, which
    /// WER ≤ 0.25 forgives.
    package var firstWordFirst = 0
    package var wer: [Double] = []
    /// The words each `wer` is of, in the same order: which words were lost or misheard shows here.
    package var heard: [String] = []

    package init() {}

    /// Counts `words` against `spoken`; returns its WER.
    @discardableResult
    package mutating func count(_ words: String, spoken: String) -> Double {
        let (said, got) = (TranscriptNormalizer.words(spoken), TranscriptNormalizer.words(words))
        let rate = WordErrors.between(reference: said, hypothesis: got).rate
        wer.append(rate)
        heard.append(words)
        if rate <= LiveBargeInFigures.werTarget { withWords += 1 }
        if Self.firstWordFirst(words, spoken: spoken) { firstWordFirst += 1 }
        return rate
    }

    /// Whether `words` begin with the first word `spoken` begins with.
    package static func firstWordFirst(_ words: String, spoken: String) -> Bool {
        guard let first = TranscriptNormalizer.words(spoken).first else { return false }
        return TranscriptNormalizer.words(words).first == first
    }

    var meanWER: String { wer.isEmpty ? "-" : String(format: "%.2f", wer.reduce(0, +) / Double(wer.count)) }
}

/// Live barge-in trials of `bench talk`: the user speaks over the reply on the loopback (the clip played into the
/// sink where `BargeInUserStart` places it in the reply, mixed there with it and heard on the source), as
/// `RunLoopbackTests` does once.
package struct LiveBargeInFigures {
    package var trials = 0
    /// Trials in which the reply was cut off.
    package var stopped = 0
    /// ... and what a recogniser makes of the audio of the user's turn as the Gateway's relay received it
    /// (`RelayUserTurn`), in both modes: `words.withWords` of them are the user's words.
    package var words = HeardWords()
    /// Native mode: the transcript the Gateway got, after the interruption prefix. With the reference Gateway that
    /// is its relay's stand-in's answer (the matching corpus clip's exact transcript), which a clipped first word
    /// does not change: the figure native rows gave before the audio was recognised. Nil in realtime mode.
    package var standIn: HeardWords?
    /// What recognised `words` ("dictation", "grammar goforward.gram").
    package var recognition = "dictation"
    /// Native mode: whose words the sessions sent and `words` judges (`LiveSTT`): `.local`, the client's own
    /// transcript as sent (`SentUserWords`), not the relay's audio. Nil in realtime mode.
    package var liveSTT: LiveSTT?
    /// Native mode: the transcription relay's contract the trials ran with (`RelayUserTurn.transcriptionUplink`).
    package var transcriptionUplink: String?
    /// From the start of the user's speech (the clip's first voiced frame, as the sink played it:
    /// `UserSpeechStart.inTheRoom`) to the decision.
    package var detectionMs: [Double] = []
    /// The same from the clip's first voiced frame as handed to the sound server (`UserSpeechStart.handedOver`
    /// plus its leading silence): the bench's own playback buffer counted as the user's, as this figure was before.
    package var detectionFromHandoverMs: [Double] = []
    package var noReply = 0
    /// Trials in which the reply stopped but the Gateway never got the turn after the barge-in (the user's words
    /// lost); realtime: no turn the relay finished after the cut, or none answered.
    package var noTurnAfter = 0
    /// Trials in which the reply's own echo cut it before the user spoke (`UserSpeechStart.precedes`): not stopped
    /// by the user, and no detection time.
    package var cutBeforeUser = 0
    /// The sessions' playback underruns, all trials (`BargeInTrial.underruns` each).
    package var underruns = 0
    /// `--record`: the sessions' recordings looked for (`LiveTalkFigures.recordings` reports them with the rest).
    package var recordings = SessionRecordingCheck()
    /// Each trial: where the user started in the reply and what came of it.
    package var perTrial: [BargeInTrial] = []
    package static let werTarget = 0.25

    package init() {}

    /// Counts what the relay received of a stopped reply's user: nil, no turn after the cut; else the words
    /// recognised of it, against what the clip says (`spoken`). Returns their WER.
    @discardableResult
    package mutating func count(words heard: String?, spoken: String) -> Double? {
        guard let heard else {
            noTurnAfter += 1
            return nil
        }
        return words.count(heard, spoken: spoken)
    }

    /// Counts the transcript the Gateway got (native mode; nil: none came). Returns its WER.
    @discardableResult
    package mutating func countStandIn(_ transcript: String?, spoken: String) -> Double? {
        var tally = standIn ?? HeardWords()
        defer { standIn = tally }
        return transcript.map { tally.count($0, spoken: spoken) }
    }

    private static func list(_ values: [Double]) -> JSONValue { .array(values.map { .double(($0 * 100).rounded() / 100) }) }

    package var json: JSONValue {
        var object: [String: JSONValue] = [
            "trials": .int(Int64(trials)), "stopped": .int(Int64(stopped)), "withWords": .int(Int64(words.withWords)),
            "goFirst": .int(Int64(words.firstWordFirst)), "wordsFrom": .string(wordsFrom),
            "noReply": .int(Int64(noReply)), "cutBeforeUser": .int(Int64(cutBeforeUser)),
            "noTurnAfter": .int(Int64(noTurnAfter)), "underruns": .int(Int64(underruns)),
            "recall": trials > 0 ? .double(Double(words.withWords) / Double(trials)) : .null,
            "wer": Self.list(words.wer), "heard": .array(words.heard.map { .string($0) }),
            "detectionMs": TalkBenchReport.summary(detectionMs), "detectionSamplesMs": Self.list(detectionMs),
            "detectionFromHandoverMs": TalkBenchReport.summary(detectionFromHandoverMs),
            "perTrial": .array(perTrial.map(\.json)),
        ]
        if let liveSTT { object["liveSTT"] = .string(liveSTT.rawValue) }
        if let transcriptionUplink { object["transcriptionUplink"] = .string(transcriptionUplink) }
        if let standIn {
            object["relayStandIn"] = [
                "withWords": .int(Int64(standIn.withWords)), "goFirst": .int(Int64(standIn.firstWordFirst)),
                "wer": Self.list(standIn.wer), "heard": .array(standIn.heard.map { .string($0) }),
            ]
        }
        return .object(object)
    }

    /// What `words` were judged from.
    package var wordsFrom: String {
        liveSTT == .local ? "the transcript the client sent (run --stt local), \(recognition)" : "the relay's audio, \(recognition)"
    }

    package var text: String {
        let p50 = BenchStatistics.percentile(detectionMs, 0.5).map { String(format: "%.0f", $0) } ?? "-"
        let p95 = BenchStatistics.percentile(detectionMs, 0.95).map { String(format: "%.0f", $0) } ?? "-"
        let first = TranscriptNormalizer.words(TalkLoopBenchmark.clipSpoken).first ?? ""
        let judged = liveSTT == .local ? "the transcript sent by run --stt local" : "their turn's audio, \(recognition)"
        var heard = "with the user's words (\(judged), WER <= \(Self.werTarget)) in \(words.withWords), "
            + "'\(first)' first in \(words.firstWordFirst), no turn after it in \(noTurnAfter); mean WER \(words.meanWER)"
        if let standIn { heard += "; relay stand-in words in \(standIn.withWords) (mean WER \(standIn.meanWER))" }
        let handover = BenchStatistics.percentile(detectionFromHandoverMs, 0.95).map { String(format: "%.0f", $0) } ?? "-"
        return "  barge-in over the reply: stopped it in \(stopped) of \(trials), \(heard); detection from the user's first word p50 \(p50) ms, p95 \(p95) ms"
            + " (p95 \(handover) ms from the clip handed to the sound server)"
            + (noReply > 0 ? " (\(noReply) without a reply)" : "")
            + (cutBeforeUser > 0 ? " (\(cutBeforeUser) cut by their own echo before the user spoke)" : "")
    }
}
