import Foundation
import SessionBridge

/// A kept `bench talk` row's barge-in trials (`OPENCLAW_TALK_BENCH_KEEP=1`: the folder named on stderr, "sessions
/// kept in ..."), judged again without running anything live (`bench talk --rejudge DIR`). Each trial's folder
/// (`live/bargein-<n>`) holds the session's events (`stdout`), the relay turns it sent (`relay-turns.json`) and
/// their audio (`turn-<id>.wav`); the words are found as the live row finds them (`RelayUserTurn`, a recogniser of
/// its own per turn), so a row re-judged gives the live row's words. Since this file, the bench also keeps each
/// trial's record (`bargein-trial.json`: where the user started, the outcome, the detection time, the grammar);
/// a folder kept before has none, and then every reply cut counts as stopped by the user (a cut before the user
/// spoke needs the user's start, which was not kept) and the detection times are not known.
package enum KeptBargeInRow {
    /// The record the bench keeps beside each barge-in trial's session.
    package static let recordFile = "bargein-trial.json"
    static let eventsFile = "stdout"
    static let turnsFile = "relay-turns.json"
    /// A kept session's events or relay turns are a few hundred kilobytes; a file over this is not one.
    static let largestFileBytes = 64 << 20

    package struct Judged: Sendable {
        package var figures: LiveBargeInFigures
        /// Trials with no kept record (`recordFile`): their outcome is read from their events alone.
        package var withoutRecord: Int
        package var folder: String

        package var text: String {
            var lines = ["bench talk --rejudge \(folder): \(figures.trials) kept barge-in trials judged again"]
            if withoutRecord > 0 {
                lines.append("  (\(withoutRecord) kept without \(KeptBargeInRow.recordFile): every cut counted as the user's, no detection times)")
            }
            return (lines + [figures.text]).joined(separator: "\n")
        }
    }

    /// What the bench keeps of one trial (`recordFile`): its report record, its detection from the clip's handover
    /// (`LiveBargeInFigures.detectionFromHandoverMs`), and what its words are judged with (`liveSTT`: from the
    /// relay's audio, or the transcript the session sent, `SentUserWords`; nil in realtime mode).
    package static func record(
        _ trial: BargeInTrial, fromHandoverMs: Double? = nil, grammar: String?, realtime: Bool, liveSTT: LiveSTT? = nil
    ) -> JSONValue {
        ["record": trial.json, "detectionFromHandoverMs": fromHandoverMs.map { .double($0) } ?? .null,
         "grammar": grammar.map { .string($0) } ?? .null, "realtime": .bool(realtime),
         "liveSTT": liveSTT.map { .string($0.rawValue) } ?? .null]
    }

    /// The trial folders under `folder` (the kept root, or its `live` folder), in trial order.
    package static func trialFolders(_ folder: String) throws -> [(trial: Int, path: String)] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw TalkBenchFailure("\(folder) is not a folder (a bench folder kept with OPENCLAW_TALK_BENCH_KEEP=1)")
        }
        let live = FileManager.default.fileExists(atPath: folder + "/live") ? folder + "/live" : folder
        let trials = ((try? FileManager.default.contentsOfDirectory(atPath: live)) ?? []).compactMap { name -> (Int, String)? in
            guard name.hasPrefix("bargein-"), let trial = Int(name.dropFirst("bargein-".count)) else { return nil }
            return (trial, live + "/" + name)
        }.sorted { $0.0 < $1.0 }
        guard !trials.isEmpty else {
            throw TalkBenchFailure("\(folder) holds no kept barge-in trials (no live/bargein-<n> folders): keep a row with "
                + "OPENCLAW_TALK_BENCH_KEEP=1 and --barge-in-trials above 0")
        }
        return trials
    }

    /// Judges the kept trials again: `grammar` as the row's `--grammar` (nil: what each trial's record kept, else
    /// dictation; realtime trials always by dictation).
    package static func rejudge(folder: String, grammar: String?) async throws -> Judged {
        var judged = Judged(figures: LiveBargeInFigures(), withoutRecord: 0, folder: folder)
        var recognitions: Set<String> = []
        for (trial, home) in try trialFolders(folder) {
            let name = "bargein-\(trial)"
            let events = try Self.events(home + "/" + eventsFile, trial: name)
            let turns = try Self.turns(home + "/" + turnsFile, trial: name)
            let kept = try keptRecord(home + "/" + recordFile, trial: name)
            if kept == nil { judged.withoutRecord += 1 }
            let realtime = kept?["realtime"]?.boolValue ?? turns.contains { $0["mode"] == "realtime" }
            let trialGrammar = realtime ? nil : grammar ?? kept?["grammar"]?.stringValue
            if let trialGrammar, !FileManager.default.isReadableFile(atPath: trialGrammar) {
                throw TalkBenchFailure("\(name): its grammar \(trialGrammar) is not readable; name one with --grammar")
            }
            recognitions.insert(trialGrammar.map { "grammar \(($0 as NSString).lastPathComponent)" } ?? "dictation")
            // A row kept before `--live-stt` judged the relay's audio.
            let sentLocally = !realtime && kept?["liveSTT"]?.stringValue == LiveSTT.local.rawValue
            if !realtime {
                judged.figures.liveSTT = sentLocally ? .local : .relay
                if !sentLocally { judged.figures.transcriptionUplink = RelayUserTurn.transcriptionUplink }
            }
            let record = try await judge(trial: trial, home: home, events: events, turns: turns, kept: kept?["record"],
                                         realtime: realtime, sentLocally: sentLocally, grammar: trialGrammar, into: &judged.figures)
            if record.outcome == "stopped", let fromHandover = number(kept?["detectionFromHandoverMs"]) {
                judged.figures.detectionFromHandoverMs.append(fromHandover)
            }
            judged.figures.perTrial.append(record)
        }
        judged.figures.recognition = recognitions.sorted().joined(separator: ", ")
        return judged
    }

    /// One trial: its outcome (the kept record's, else from its events) and, if the user stopped the reply, the
    /// words of the turn the relay received after the cut (`sentLocally`: the transcript the session sent after it).
    private static func judge(
        trial: Int, home: String, events: [JSONValue], turns: [JSONValue], kept: JSONValue?, realtime: Bool, sentLocally: Bool, grammar: String?,
        into figures: inout LiveBargeInFigures
    ) async throws -> BargeInTrial {
        figures.trials += 1
        var record = BargeInTrial(trial: trial, userAtSeconds: number(kept?["userAtSeconds"]), outcome: "noReply")
        record.userSpeechAfterReplyMs = number(kept?["userSpeechAfterReplyMs"])
        record.sentence = kept?["sentence"]?.intValue.map { Int($0) }
        record.intoSentenceMs = number(kept?["intoSentenceMs"])
        let cut = events.contains { $0["event"] == "bargeIn" }
        record.outcome = kept?["outcome"]?.stringValue
            ?? (!events.contains { $0["event"] == "speakingStarted" } ? "noReply" : cut ? "stopped" : "notStopped")
        switch record.outcome {
        case "noReply": figures.noReply += 1
        case "cutBeforeUser": figures.cutBeforeUser += 1
        case "stopped": figures.stopped += 1
        default: break
        }
        guard record.outcome == "stopped" else { return record }
        if let detection = number(kept?["detectionMs"]) {
            figures.detectionMs.append(detection)
            record.detectionMs = detection
        }
        if sentLocally {
            switch SentUserWords.native(events: events) {
            case .sent(let words):
                (record.heard, record.wer) = (words, figures.count(words: words, spoken: TalkLoopBenchmark.clipSpoken))
                record.firstWordFirst = HeardWords.firstWordFirst(words, spoken: TalkLoopBenchmark.clipSpoken)
            case .noTurnAfter, .notCut:
                figures.count(words: nil, spoken: TalkLoopBenchmark.clipSpoken)
            }
            return record
        }
        let outcome = realtime ? RelayUserTurn.realtime(events: events, turns: turns) : RelayUserTurn.native(events: events, turns: turns)
        switch outcome {
        case .answered(let found):
            // The turns' audio beside relay-turns.json: the paths it names are where the trial was kept first.
            let local = try found.map { turn in
                let audio = home + "/" + (turn.audio as NSString).lastPathComponent
                guard FileManager.default.isReadableFile(atPath: audio) else {
                    throw TalkBenchFailure("bargein-\(trial): \((turn.audio as NSString).lastPathComponent), the user's turn in "
                        + "\(turnsFile), is not in \(home)")
                }
                return RelayUserTurn(audio: audio, speechStartMs: turn.speechStartMs)
            }
            let words = try await RelayUserTurn.words(local, grammar: grammar)
            (record.heard, record.wer) = (words, figures.count(words: words, spoken: TalkLoopBenchmark.clipSpoken))
            record.firstWordFirst = HeardWords.firstWordFirst(words, spoken: TalkLoopBenchmark.clipSpoken)
        case .noTurnAfter, .notCut:
            figures.count(words: nil, spoken: TalkLoopBenchmark.clipSpoken)
        }
        if !realtime {
            // What the Gateway got: the transcript the client sent after the cut (its text without the prefix).
            func time(_ event: JSONValue) -> Date? { event["time"]?.stringValue.flatMap(TalkLoopBenchmark.eventTime) }
            let cutAt = events.first { $0["event"] == "bargeIn" }.flatMap(time) ?? .distantFuture
            let sent = events.first { $0["event"] == "transcriptSent" && (time($0) ?? .distantPast) > cutAt }?["text"]?.stringValue
            (record.standInHeard, record.standInWer) = (sent, figures.countStandIn(sent, spoken: TalkLoopBenchmark.clipSpoken))
        }
        return record
    }

    private static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .double(let number)?: number
        case .int(let number)?: Double(number)
        default: nil
        }
    }

    private static func contents(_ path: String, trial: String, what: String) throws -> Data {
        guard FileManager.default.fileExists(atPath: path) else {
            throw TalkBenchFailure("\(trial): no \((path as NSString).lastPathComponent) (\(what)) in \((path as NSString).deletingLastPathComponent)")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        guard size <= largestFileBytes else { throw TalkBenchFailure("\(trial): \(path) is \(size) bytes, not a kept trial's") }
        do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw TalkBenchFailure("\(trial): \(path) cannot be read: \(error)")
        }
    }

    /// The session's JSON events, a line each; a last line cut off when the session was killed is left out.
    static func events(_ path: String, trial: String) throws -> [JSONValue] {
        let text = String(decoding: try contents(path, trial: trial, what: "the session's events"), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var events: [JSONValue] = []
        for (index, line) in lines.enumerated() where !line.isEmpty {
            if let event = JSONValue.parse(Array(line.utf8)), event["event"] != nil {
                events.append(event)
            } else if index < lines.count - 1 {
                throw TalkBenchFailure("\(trial): line \(index + 1) of \(path) is not a JSON event: \(line.prefix(80))")
            }
        }
        guard !events.isEmpty else { throw TalkBenchFailure("\(trial): \(path) holds no events") }
        return events
    }

    /// The relay turns the bench dumped after the trial (`relay-turns`): a JSON array of objects.
    static func turns(_ path: String, trial: String) throws -> [JSONValue] {
        let data = try contents(path, trial: trial, what: "the relay turns, kept by bench talk since 564fc40")
        guard let turns = JSONValue.parse(Array(data))?.arrayValue, turns.allSatisfy({ $0.objectValue != nil }) else {
            throw TalkBenchFailure("\(trial): \(path) is not a JSON array of relay turns")
        }
        return turns
    }

    static func keptRecord(_ path: String, trial: String) throws -> JSONValue? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let kept = JSONValue.parse(Array(try contents(path, trial: trial, what: "the trial's record"))), kept["record"]?.objectValue != nil else {
            throw TalkBenchFailure("\(trial): \(path) is not a kept trial record (JSON with a \"record\" object)")
        }
        return kept
    }
}
