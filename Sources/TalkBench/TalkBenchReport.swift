import Foundation
import SessionBridge

/// What `bench talk` measured: the file session's turns (timed from its events and its output track), and the live
/// sessions' figures when they ran. The command runs the sessions; this is the arithmetic and the report.
package struct TalkBenchReport {
    package var clips = 0
    package var transcriptsSent = 0
    package var bargeIns = 0
    package var speechEndToSentMs: [Double] = []
    package var speechEndToFirstAudioMs: [Double] = []
    /// From the transcript sent to the first reply delta: the agent's (here the reference Gateway's) share.
    package var agentMs: [Double] = []
    package var bargeInToSilentMs: [Double] = []
    /// The file session's barge-ins as the session times them (`bargeIn`'s `detectionLatencyMs`): from when it
    /// reported the utterance's start (`speechStarted`, on its clock) to its decision. Not the live rows' detection
    /// (`LiveBargeInFigures.detectionMs`, from the user's sound): the session reports the start once its endpointer
    /// has opened, when the recogniser mostly has a word already (p50 under 10 ms), or early on a clip's leading
    /// noise, seconds' worth for a few corpus clips (the rhasspy clips' 0.7-0.95 s before their first word).
    package var bargeInDetectionMs: [Double] = []
    package var live: LiveTalkFigures?
    package var liveUnavailable: String?
    /// The other build whose `run` the sessions used (`TalkLoopBenchmark.Plan.runBinary`); nil: this one.
    package var runBinary: String?

    /// The silence that ends an utterance in every `bench talk` session (`run --silence-ms`).
    package static let silenceMs = 700
    package static let firstAudioTargetMs = Double(silenceMs + 300)
    package static let bargeInTargetMs = 150.0
    package static let erleTargetDb = 20.0

    /// The figures of one file session, from its events and its output track (both count from its start).
    package static func turns(events: [JSONValue], track: [Float], sampleRate: Int) -> TalkBenchReport {
        var report = TalkBenchReport()
        func ms(_ event: JSONValue) -> Double { Double(event["monotonicMs"]?.intValue ?? 0) }
        let frame = sampleRate / 100
        let voiced: [Bool] = stride(from: 0, to: max(0, track.count - frame), by: frame).map { start in
            (track[start..<start + frame].reduce(Float(0)) { $0 + $1 * $1 } / Float(frame)).squareRoot() > 0.01
        }
        func frameIndex(_ ms: Double) -> Int { max(0, Int(ms / 10)) }
        var speechEnd: Double?
        for (index, event) in events.enumerated() {
            switch event["event"]?.stringValue {
            case "speechEnded":
                speechEnd = Double(event["lastSpeechEndMs"]?.intValue ?? 0)
            case "transcriptSent":
                report.transcriptsSent += 1
                guard let end = speechEnd else { break }
                speechEnd = nil
                let sent = ms(event)
                report.speechEndToSentMs.append(sent - end)
                if let delta = events[index...].first(where: { $0["event"] == "replyDelta" }) { report.agentMs.append(ms(delta) - sent) }
                if let onset = voiced.indices.first(where: { $0 >= frameIndex(sent) && voiced[$0] }) {
                    report.speechEndToFirstAudioMs.append(Double(onset * 10) - end)
                }
            case "bargeIn":
                report.bargeIns += 1
                report.bargeInDetectionMs.append(event["detectionLatencyMs"].flatMap { if case .double(let d) = $0 { d } else { $0.intValue.map(Double.init) } } ?? 0)
                // Silent from the first frame at or after the decision that 300 ms of silence follow.
                let from = frameIndex(ms(event))
                if let silent = (from..<voiced.count).first(where: { start in !voiced[start..<min(voiced.count, start + 30)].contains(true) }) {
                    report.bargeInToSilentMs.append(Double((silent - from) * 10))
                }
            default:
                break
            }
        }
        return report
    }

    package static func summary(_ values: [Double]) -> JSONValue {
        func value(_ p: Double) -> JSONValue { BenchStatistics.percentile(values, p).map { .double(($0 * 10).rounded() / 10) } ?? .null }
        return ["p50": value(0.5), "p95": value(0.95), "count": .int(Int64(values.count))]
    }

    package var firstAudioExcludingAgentMs: [Double] {
        zip(speechEndToFirstAudioMs, agentMs).map { $0 - $1 }
    }

    package init() {}

    package var json: JSONValue {
        var object: [String: JSONValue] = [
            "clips": .int(Int64(clips)), "silenceMs": .int(Int64(Self.silenceMs)),
            "transcriptsSent": .int(Int64(transcriptsSent)), "bargeIns": .int(Int64(bargeIns)),
            "speechEndToTranscriptSentMs": Self.summary(speechEndToSentMs),
            "speechEndToFirstReplyAudioMs": Self.summary(speechEndToFirstAudioMs),
            "agentMs": Self.summary(agentMs),
            "firstReplyAudioExcludingAgentMs": Self.summary(firstAudioExcludingAgentMs),
            "bargeInToSilentMs": Self.summary(bargeInToSilentMs),
            "bargeInDetectionMs": Self.summary(bargeInDetectionMs),
            "targets": ["firstReplyAudioP95Ms": .double(Self.firstAudioTargetMs), "bargeInP95Ms": .double(Self.bargeInTargetMs),
                        "erleDb": .double(Self.erleTargetDb)],
        ]
        // Every measurement, for the report's histograms.
        func list(_ values: [Double]) -> JSONValue { .array(values.map { .double(($0 * 10).rounded() / 10) }) }
        object["samples"] = [
            "speechEndToTranscriptSentMs": list(speechEndToSentMs), "speechEndToFirstReplyAudioMs": list(speechEndToFirstAudioMs),
            "bargeInDetectionMs": list(bargeInDetectionMs), "bargeInToSilentMs": list(bargeInToSilentMs),
        ]
        if let live { object["live"] = live.json }
        if let liveUnavailable { object["liveUnavailable"] = .string(liveUnavailable) }
        if let runBinary { object["runBinary"] = .string(runBinary) }
        return .object(object)
    }

    package var text: String {
        func line(_ name: String, _ values: [Double]) -> String {
            let p50 = BenchStatistics.percentile(values, 0.5).map { String(format: "%.0f", $0) } ?? "-"
            let p95 = BenchStatistics.percentile(values, 0.95).map { String(format: "%.0f", $0) } ?? "-"
            return "  \(name.padding(toLength: 44, withPad: " ", startingAt: 0)) p50 \(p50) ms  p95 \(p95) ms  (\(values.count))"
        }
        var lines = [
            "Talk loop (\(clips) clips, silence window \(Self.silenceMs) ms, \(transcriptsSent) transcripts sent, \(bargeIns) barge-ins)",
            line("speech end -> transcript sent", speechEndToSentMs),
            line("speech end -> first reply audio", speechEndToFirstAudioMs),
            line("  of which the agent (sent -> first delta)", agentMs),
            line("barge-in decision -> playback silent", bargeInToSilentMs),
            line("reported speech start -> barge-in decision", bargeInDetectionMs),
        ]
        if let runBinary { lines.append("  sessions run by \(runBinary)") }
        if let live { lines += live.text } else { lines.append("  live: not measured: \(liveUnavailable ?? "no server")") }
        return lines.joined(separator: "\n")
    }
}

/// The live half of `bench talk`: sessions on the sound server's loopback, in the conditions asked for
/// (`TalkBenchConditions`): the reply alone (self-echo), and the user speaking over it (`LiveBargeInFigures`).
package struct LiveTalkFigures {
    package struct SelfEcho {
        /// One trial whose reply interrupted itself: which trial (from 0), how, and what the echo was heard as.
        package struct Interruption: Equatable {
            package var trial: Int
            package var reasons: [SelfEchoVerdict.Reason]
            package var partial: String?
        }

        package var trials = 0
        /// Trials in which the reply interrupted itself in any way (`SelfEchoVerdict.Reason`): its echo cut it (the
        /// client's barge-in, the relay's clear, the output queue's overflow) or was answered.
        package var selfInterruptions = 0
        /// Trials in which the echo went out to the Gateway as a turn of its own.
        package var echoTurns = 0
        /// Trials where the clip did not lead to a spoken reply (nothing to measure).
        package var noReply = 0
        /// Trials whose reply was still playing when the bench's wait for its end ran out (stuck, or never ending).
        package var replyUnfinished = 0
        /// What the recogniser made of the echo where it cut the reply off (the barge-in's partial).
        package var interruptingPartials: [String] = []
        package var interruptions: [Interruption] = []
        package init() {}

        /// Trials interrupted for `reason` (a trial may have several reasons).
        package func count(_ reason: SelfEchoVerdict.Reason) -> Int { interruptions.filter { $0.reasons.contains(reason) }.count }

        /// Counts trial `trial` (the next one) by its verdict.
        package mutating func add(_ verdict: SelfEchoVerdict) {
            let trial = trials
            trials += 1
            if !verdict.replied { noReply += 1 } else if !verdict.finished { replyUnfinished += 1 }
            if verdict.reasons.contains(.echoTurn) { echoTurns += 1 }
            if let partial = verdict.partial { interruptingPartials.append(partial) }
            guard verdict.interrupted else { return }
            selfInterruptions += 1
            interruptions.append(Interruption(trial: trial, reasons: verdict.reasons, partial: verdict.partial))
        }

        package var json: JSONValue {
            let byReason = SelfEchoVerdict.Reason.allCases.map { ($0.rawValue, JSONValue.int(Int64(count($0)))) }
            return [
                "trials": .int(Int64(trials)), "selfInterruptions": .int(Int64(selfInterruptions)), "echoTurns": .int(Int64(echoTurns)),
                "noReply": .int(Int64(noReply)), "replyUnfinished": .int(Int64(replyUnfinished)),
                "interruptingPartials": .array(interruptingPartials.map { .string($0) }),
                "byReason": .object(Dictionary(uniqueKeysWithValues: byReason)),
                "interruptions": .array(interruptions.map { cut in
                    var entry: [String: JSONValue] = ["trial": .int(Int64(cut.trial)), "reasons": .array(cut.reasons.map { .string($0.rawValue) })]
                    if let partial = cut.partial { entry["partial"] = .string(partial) }
                    return .object(entry)
                }),
            ]
        }

        /// One line of the text report for `--aec mode`.
        package func text(mode: String) -> String {
            let reasons = SelfEchoVerdict.Reason.allCases.filter { count($0) > 0 }.map { "\($0.rawValue) \(count($0))" }
            return "  self-echo, --aec \(mode): interrupted itself in \(selfInterruptions) of \(trials) trials"
                + (reasons.isEmpty ? "" : " (\(reasons.joined(separator: ", ")))")
                + ", its echo sent as a turn in \(echoTurns), reply unfinished in \(replyUnfinished)"
                + (noReply > 0 ? " (\(noReply) without a reply)" : "")
                + (interruptingPartials.isEmpty ? "" : "; heard as \(interruptingPartials.map { "'\($0)'" }.joined(separator: ", "))")
        }
    }

    package var sink: String
    package var source: String
    /// The sound server that answered (`pulse` or `pipewire`).
    package var server: String?
    package var conditions: JSONValue = .null
    package var selfEcho: [String: SelfEcho] = [:]
    package var bargeIn: LiveBargeInFigures?
    /// The session's CPU per self-echo trial with echo cancellation, in percent of a core: listening before the user
    /// speaks (3 s), the reply's first 3 s, and the whole reply (from its first sentence to its end; finished replies
    /// only). A trial reads about 4-5 % unless the recogniser decodes something over the reply (a sound that lowered
    /// it, an utterance its echo opened: 0.3-0.8 s of CPU each), so the figures come by trial as well as summarised.
    package var idleCPUPercent: [Double] = []
    package var speakingCPUPercent: [Double] = []
    package var wholeReplyCPUPercent: [Double] = []
    /// Raw capture over cleaned capture of the reply's own voice (espeak-ng) on the loopback.
    package var erleDb: Double?
    package var erleUnavailable: String?
    /// The same measurement by second (`EchoMeasurement.secondERLE`), their median, and the aligner's last lag. The
    /// whole window's figure is an energy ratio, so one second the canceller loses decides it (one second at 15 dB
    /// among twelve at 60 reads 26 dB): a sound server's glitch, such as a graph quantum PipeWire drops or inserts
    /// under load until the aligner puts the reference back, about a second later. The median second is what the
    /// canceller does most of the time; the seconds under the goal count the glitches.
    package var erleSecondsDb: [Double] = []
    package var erleMedianSecondDb: Double?
    package var erleAlignedLagMs: Double?
    /// Issue 22's goal for the canceller on both sound servers, dB.
    package static let erleSecondGoalDb = 40.0

    /// The measured seconds whose ERLE is under `erleSecondGoalDb`.
    package var erleSecondsUnderGoal: Int {
        erleSecondsDb.filter { $0 < Self.erleSecondGoalDb }.count
    }
    /// CPU and memory over the first session with echo cancellation (`ResourceTimeline`).
    package var timeline: JSONValue?
    /// Playback underruns: the self-echo sessions' (their logs; the barge-in sessions' are `bargeIn.underruns`) and
    /// the bench's own speaker's (the question and the user's clip).
    package var selfEchoUnderruns = 0
    package var benchUnderruns = 0
    /// `--record`: the sessions whose recording was looked for, and those that left none whole, with why.
    package var recordings = SessionRecordingCheck()

    package init(sink: String, source: String) { (self.sink, self.source) = (sink, source) }

    private static func tenths(_ values: [Double]) -> JSONValue {
        .array(values.map { .double(($0 * 10).rounded() / 10) })
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [
            "sink": .string(sink), "source": .string(source), "server": server.map { .string($0) } ?? .null,
            "conditions": conditions, "selfEcho": .object(selfEcho.mapValues(\.json)),
            "cpuPercent": [
                "idle": TalkBenchReport.summary(idleCPUPercent), "speaking": TalkBenchReport.summary(speakingCPUPercent),
                "wholeReply": TalkBenchReport.summary(wholeReplyCPUPercent),
                "byTrial": ["idle": Self.tenths(idleCPUPercent), "speaking": Self.tenths(speakingCPUPercent), "wholeReply": Self.tenths(wholeReplyCPUPercent)],
            ],
        ]
        object["erleDb"] = erleDb.map { .double(($0 * 10).rounded() / 10) } ?? .null
        if let erleUnavailable { object["erleUnavailable"] = .string(erleUnavailable) }
        if let erleMedianSecondDb {
            let tenth = { (value: Double) in JSONValue.double((value * 10).rounded() / 10) }
            object["erleMedianSecondDb"] = tenth(erleMedianSecondDb)
            object["erleSecondsDb"] = .array(erleSecondsDb.map(tenth))
            object["erleSecondsUnderGoal"] = .int(Int64(erleSecondsUnderGoal))
            object["erleAlignedLagMs"] = erleAlignedLagMs.map(tenth) ?? .null
        }
        if let timeline { object["timeline"] = timeline }
        if let bargeIn { object["bargeIn"] = bargeIn.json }
        object["underruns"] = [
            "sessions": .int(Int64(selfEchoUnderruns + (bargeIn?.underruns ?? 0))), "selfEcho": .int(Int64(selfEchoUnderruns)),
            "bargeIn": .int(Int64(bargeIn?.underruns ?? 0)), "bench": .int(Int64(benchUnderruns)),
        ]
        if recordings.checked > 0 { object["recordings"] = recordings.json }
        return .object(object)
    }

    package var text: [String] {
        var lines = ["  live conditions: \(conditions["mode"]?.stringValue ?? "talk") mode, \(server ?? "?") server, \(conditions["voice"]?.stringValue ?? "?") voice, reply of \(conditions["replyWords"]?.intValue ?? 0) words, "
            + (conditions["recognition"]?.stringValue ?? "dictation")]
        if case .double(let gain)? = conditions["userGainDb"], gain != 0 { lines[0] += String(format: ", the user over the reply at %+.1f dB", gain) }
        var erle = erleDb.map { String(format: "%.1f dB", $0) } ?? "not measured: \(erleUnavailable ?? "")"
        if let median = erleMedianSecondDb {
            erle += String(format: " (by second: median %.1f dB, %d of %d seconds under %.0f dB)", median, erleSecondsUnderGoal, erleSecondsDb.count, Self.erleSecondGoalDb)
        }
        lines.append(String(format: "  ERLE of the reply's voice, %@ -> %@: %@", sink, source, erle))
        let idle = BenchStatistics.percentile(idleCPUPercent, 0.5) ?? 0
        let speaking = BenchStatistics.percentile(speakingCPUPercent, 0.5) ?? 0
        lines.append(String(format: "  CPU of a live session (echo cancellation on, median): idle %.1f %%, speaking %.1f %% of a core", idle, speaking))
        lines.append("  playback underruns: \(selfEchoUnderruns + (bargeIn?.underruns ?? 0)) in the sessions, \(benchUnderruns) in the bench's own speaker")
        if let wholeReply = BenchStatistics.percentile(wholeReplyCPUPercent, 0.5) {
            let byTrial = { (values: [Double]) in values.map { String(format: "%.1f", $0) }.joined(separator: " ") }
            lines.append(String(format: "    by trial: speaking (the reply's first 3 s) %@; over the whole reply %@ (median %.1f %%)",
                                byTrial(speakingCPUPercent), byTrial(wholeReplyCPUPercent), wholeReply))
        }
        for (mode, figures) in selfEcho.sorted(by: { $0.key > $1.key }) { lines.append(figures.text(mode: mode)) }
        if let bargeIn { lines.append(bargeIn.text) }
        if recordings.checked > 0 {
            lines.append("  echo recordings: \(recordings.checked - recordings.missing.count) of \(recordings.checked) sessions left theirs whole"
                + recordings.missing.sorted { $0.key < $1.key }.map { "; \($0.key): \($0.value)" }.joined())
        }
        return lines
    }
}

/// When the bench's user began to speak over the reply: the clip's first voiced sample, placed by when the sink
/// finished playing the clip (`heardToEnd`), and, as the figure was first taken, by when it was handed over.
package struct UserSpeechStart: Sendable, Equatable {
    /// When the clip was handed to the sound server, plus its leading silence.
    package var handedOver: Date
    /// When the sink played the clip's first voiced sample: what a microphone in the room hears first. Never
    /// before `handedOver` (a late completion cannot put the sound before it was given).
    package var inTheRoom: Date

    /// `heardToEnd`: when `play` returned, the sink having played the clip's last sample (within one of the
    /// playback stream's write requests, 10 ms); `onsetSeconds`: the clip's leading silence; `clipSeconds`: its length.
    package init(handedOver: Date, heardToEnd: Date, onsetSeconds: Double, clipSeconds: Double) {
        self.handedOver = handedOver.addingTimeInterval(onsetSeconds)
        inTheRoom = max(self.handedOver, heardToEnd.addingTimeInterval(onsetSeconds - clipSeconds))
    }

    /// Whether a barge-in decided at `decided` came before the user's first word was even handed to the sound
    /// server: the reply's own echo cut it, not the user.
    package func precedes(_ decided: Date) -> Bool { decided < handedOver }
}
