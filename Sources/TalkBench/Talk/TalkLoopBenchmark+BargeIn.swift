import AudioIO
import Foundation
import SessionBridge
import SpeechRecognition

extension TalkLoopBenchmark {
    static let clipSpoken = "go forward ten meters"

    /// `trials` sessions in which the user's clip, after the first turn's reply starts, is played again over it.
    static func bargeInTrials(
        _ trials: Int, plan: LivePlan, speaker: PulsePlayback, clip: PCMBuffer, gateway: ReferenceGatewayProcess
    ) async throws -> LiveBargeInFigures {
        var figures = LiveBargeInFigures()
        // What the relay received of the user is recognised here (`RelayUserTurn`): native, with the session's own
        // recogniser, from the client's cleaned capture as sent (a pcm16 16 kHz uplink); realtime, by dictation. A
        // recogniser of its own per turn, so no turn's figure depends on the trials judged before it.
        let grammar = plan.conditions.realtime ? nil : plan.conditions.grammar
        figures.recognition = grammar.map { "grammar \(($0 as NSString).lastPathComponent)" } ?? "dictation"
        // `--live-stt local`: the sessions send their own recogniser's transcript; that text is what is judged.
        let sentLocally = !plan.conditions.realtime && plan.conditions.liveSTT == .local
        figures.liveSTT = plan.conditions.realtime ? nil : plan.conditions.liveSTT
        if !plan.conditions.realtime, !sentLocally {
            _ = try gateway.control(#"{"cmd": "talk-uplink", "transcription": "\#(RelayUserTurn.transcriptionUplink)"}"#)
            figures.transcriptionUplink = RelayUserTurn.transcriptionUplink
        }
        // Where the clip's speech starts: its first frame over the loopback tests' voiced level, at the clip's own
        // level (a quieter user starts speaking at the same moment).
        let onsetSeconds = Double(firstVoicedSample(clip.samples)) / Double(clip.sampleRate)
        let clipSeconds = Double(clip.samples.count) / Double(clip.sampleRate)
        let overReply = try PCMBuffer(sampleRate: clip.sampleRate, samples: plan.conditions.userOverReply(clip.samples))
        for trial in 0..<trials {
            let home = "\(plan.folder)/bargein-\(trial)"
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            _ = try relayRecord(gateway)
            let child = try await plan.session(home: home, aec: "webrtc", gateway: gateway, record: "bargein-\(trial)")
            guard await child.waitFor(#""to":"listening""#, upTo: .seconds(60)) else {
                await child.stop()
                throw TalkBenchFailure("the live session did not start: \(child.stderr.suffix(600))")
            }
            let before = try transcriptCount(gateway)
            try await Task.sleep(for: .milliseconds(1500))
            _ = try await speaker.play(clip)
            figures.trials += 1
            let userAt = plan.conditions.userStart.seconds(trial: trial, clipSeconds: clipSeconds)
            var record = BargeInTrial(trial: trial, userAtSeconds: userAt, outcome: "noReply")
            var fromHandoverMs: Double?
            defer {
                record.underruns = child.playbackUnderruns
                figures.underruns += child.playbackUnderruns
                figures.recordings.check("bargein-\(trial)", in: plan.record, child: child)
                figures.perTrial.append(record)
                // Beside the session's events and relay turns, for `bench talk --rejudge` (`KeptBargeInRow`).
                let kept = KeptBargeInRow.record(
                    record, fromHandoverMs: fromHandoverMs, grammar: grammar, realtime: plan.conditions.realtime, liveSTT: figures.liveSTT)
                try? Data(kept.jsonText.utf8).write(to: URL(fileURLWithPath: home + "/" + KeptBargeInRow.recordFile))
            }
            guard await child.waitFor(#""event":"speakingStarted""#, upTo: .seconds(30)) else {
                figures.noReply += 1
                await child.stop()
                continue
            }
            try await Task.sleep(for: .seconds(userAt))
            let handedOver = Date()
            _ = try await speaker.play(overReply)
            // `play` returns once the sink has played the clip's last sample: the user's first word was in the room
            // the clip's length before that, less its leading silence. The bench's own playback buffer (up to
            // `PlaybackBufferPlan` and the stream's start) lies before it, and is not the user's.
            let spoken = UserSpeechStart(handedOver: handedOver, heardToEnd: Date(), onsetSeconds: onsetSeconds, clipSeconds: clipSeconds)
            if plan.conditions.realtime {
                // The user's turn ends on the relay's silence after their clip; its answer starting is the end.
                _ = await child.waitFor(#""event":"speakingStarted""#, count: 2, upTo: .seconds(20))
            } else {
                _ = await child.waitFor(#""event":"transcriptSent""#, count: 2, upTo: .seconds(20))
            }
            try await Task.sleep(for: .milliseconds(500))
            await child.stop()
            let turns = try gateway.control(JSONValue.object(["cmd": "relay-turns", "dump": .string(home), "clear": true]).jsonText)["turns"]?.arrayValue ?? []
            // Beside the turns' audio and the session's events, so a kept folder holds what its words are judged from.
            try Data(JSONValue.array(turns).jsonText.utf8).write(to: URL(fileURLWithPath: home + "/relay-turns.json"))
            let events = child.events
            record.place(spoken: spoken.inTheRoom, events: events)
            record.outcome = "notStopped"
            guard let bargeIn = events.first(where: { $0["event"] == "bargeIn" }) else { continue }
            let decided = bargeIn["time"]?.stringValue.flatMap(eventTime)
            if let decided, spoken.precedes(decided) {
                figures.cutBeforeUser += 1
                record.outcome = "cutBeforeUser"
                continue
            }
            figures.stopped += 1
            record.outcome = "stopped"
            if let decided {
                figures.detectionMs.append(decided.timeIntervalSince(spoken.inTheRoom) * 1000)
                figures.detectionFromHandoverMs.append(decided.timeIntervalSince(spoken.handedOver) * 1000)
                fromHandoverMs = figures.detectionFromHandoverMs.last
                record.detectionMs = figures.detectionMs.last
            }
            if sentLocally {
                switch SentUserWords.native(events: events) {
                case .sent(let words):
                    (record.heard, record.wer) = (words, figures.count(words: words, spoken: clipSpoken))
                    record.firstWordFirst = HeardWords.firstWordFirst(words, spoken: clipSpoken)
                case .noTurnAfter, .notCut:
                    figures.count(words: nil, spoken: clipSpoken)
                }
                continue
            }
            let outcome = plan.conditions.realtime ? RelayUserTurn.realtime(events: events, turns: turns) : RelayUserTurn.native(events: events, turns: turns)
            switch outcome {
            case .answered(let turns):
                let words = try await RelayUserTurn.words(turns, grammar: grammar)
                (record.heard, record.wer) = (words, figures.count(words: words, spoken: clipSpoken))
                record.firstWordFirst = HeardWords.firstWordFirst(words, spoken: clipSpoken)
            case .noTurnAfter, .notCut:
                figures.count(words: nil, spoken: clipSpoken)
            }
            if !plan.conditions.realtime {
                let message = try transcripts(gateway).dropFirst(before + 1).first
                let transcript = message?.replacing(#/^Assistant speech interrupted at [0-9.]+s\.\n\n/#, with: "")
                (record.standInHeard, record.standInWer) = (transcript, figures.countStandIn(transcript, spoken: clipSpoken))
            }
        }
        return figures
    }

    static func transcripts(_ gateway: ReferenceGatewayProcess) throws -> [String] {
        (try gateway.control("chat-transcripts")["transcripts"]?.arrayValue ?? []).compactMap { $0["message"]?.stringValue }
    }

    static func transcriptCount(_ gateway: ReferenceGatewayProcess) throws -> Int { try transcripts(gateway).count }

    package static func eventTime(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// The first sample of the first 20 ms frame louder than speech's quietest (RMS 300).
    package static func firstVoicedSample(_ samples: [Int16]) -> Int {
        let frame = AudioFrame.samplesPerFrame
        return stride(from: 0, to: max(0, samples.count - frame), by: frame).first { start in
            (samples[start..<start + frame].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(frame)).squareRoot() > 300
        } ?? 0
    }
}
