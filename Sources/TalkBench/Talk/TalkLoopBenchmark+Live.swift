import AudioIO
import Foundation
import SessionBridge
import SpeechSynthesis
import TalkLogging

extension TalkLoopBenchmark {
    static let speechFolder = "/usr/share/pocketsphinx/test/data"

    /// How the live sessions run: against which Gateway, in which conditions, how many of each.
    struct LivePlan {
        var trials: Int
        var offTrials: Int
        var bargeInTrials: Int
        var conditions: TalkBenchConditions
        var sink: String
        var source: String
        var folder: String
        /// `--record DIR`: each session's echo stages are recorded to DIR/<session> (`bench aec --replay`).
        var record: String?
        /// Another build's `openclaw-talk` to run (`Plan.runBinary`).
        var runBinary: String?

        /// What a turn sent to the Gateway shows as: in realtime mode the relay's final of the user's words (`final`;
        /// the relay's finals with no words show nowhere, hence `SelfEchoVerdict.RelayRecord.turns`).
        var turnEvent: String { conditions.realtime ? "final" : "transcriptSent" }

        /// A reply of `replySeconds` needs this long to play, with the local voice at its slowest.
        var replyWait: Duration { .seconds(30 + 2 * (conditions.replySeconds ?? 10)) }

        func session(home: String, aec: String, gateway: ReferenceGatewayProcess, record name: String) async throws -> TalkChild {
            try await TalkChild(
                ["--gateway", gateway.startup.url, "--token", token, "--source", source, "--sink", sink, "--aec", aec, "--json",
                 "--silence-ms", "\(silenceMs)", "--seconds", "\(90 + 3 * (conditions.replySeconds ?? 10))"]
                    + conditions.runArguments,
                home: home, environment: record.map { ["OPENCLAW_TALK_AEC_RECORD": "\($0)/\(name)"] } ?? [:], binary: runBinary)
        }
    }

    /// Self-echo sessions (echo cancellation on, then off) on the loopback: a clip played into the sink is heard,
    /// the reply plays into the same sink and comes back on the source; then the barge-in sessions. CPU is sampled
    /// in the sessions with echo cancellation, idle before the clip and while the reply plays.
    static func live(_ plan: LivePlan, gateway: ReferenceGatewayProcess, logger: Logger) async throws -> LiveTalkFigures {
        var figures = LiveTalkFigures(sink: plan.sink, source: plan.source)
        figures.server = try await plan.conditions.checkedServer().rawValue
        figures.conditions = plan.conditions.json
        let clip = try AudioFileReader.readMono(path: speechFolder + "/goforward.raw")
        let speaker = try PulsePlayback(sink: plan.sink, logger: logger)
        do {
            try await selfEchoTrials(plan, into: &figures, speaker: speaker, clip: clip, gateway: gateway)
            if plan.bargeInTrials > 0 {
                let bargeIn = try await bargeInTrials(plan.bargeInTrials, plan: plan, speaker: speaker, clip: clip, gateway: gateway)
                figures.bargeIn = bargeIn
                figures.recordings.merge(bargeIn.recordings)
            }
        } catch {
            await speaker.close()
            throw error
        }
        figures.benchUnderruns = speaker.underruns.value
        await speaker.close()
        return figures
    }

    private static func selfEchoTrials(
        _ plan: LivePlan, into figures: inout LiveTalkFigures, speaker: PulsePlayback, clip: PCMBuffer, gateway: ReferenceGatewayProcess
    ) async throws {
        let (sink, source) = (figures.sink, figures.source)
        var logger = Logger(label: "openclaw-talk.bench.talk")
        // The ERLE measurement's own lines (underruns, the aligner's moves) at debug when OPENCLAW_TALK_LOG_LEVEL asks.
        logger.logLevel = min(.warning, StreamLogHandler.defaultLevel)
        do {
            let erle = try await replyERLE(plan.conditions.reply, sink: sink, source: source, logger: logger)
            figures.erleDb = erle.erleDb
            (figures.erleSecondsDb, figures.erleMedianSecondDb) = (erle.secondErleDb ?? [], erle.medianSecondErleDb)
            figures.erleAlignedLagMs = erle.alignedLagMs
        } catch {
            figures.erleUnavailable = String(describing: error)
        }
        for (mode, trials) in [("webrtc", plan.trials), ("off", plan.offTrials)] {
            var echo = LiveTalkFigures.SelfEcho()
            for trial in 0..<trials {
                if plan.conditions.realtime { _ = try relayRecord(gateway) }
                let home = "\(plan.folder)/\(mode)-\(trial)"
                try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
                let child = try await plan.session(home: home, aec: mode, gateway: gateway, record: "\(mode)-\(trial)")
                let timeline = mode == "webrtc" && trial == 0 ? ResourceTimeline(child: child) : nil
                await timeline?.begin()
                guard await child.waitFor(#""to":"listening""#, upTo: .seconds(60)) else {
                    await child.stop()
                    throw TalkBenchFailure("the live session did not start: \(child.stderr.suffix(600))")
                }
                await timeline?.mark("listening")
                try await Task.sleep(for: .milliseconds(500))
                let idle = await child.cpuPercent(over: 3)
                await timeline?.mark("clip played")
                _ = try await speaker.play(clip)
                var speaking: Double?
                var wholeReply: Double?
                if await child.waitFor(#""event":"speakingStarted""#, upTo: .seconds(30)) {
                    await timeline?.mark("speaking")
                    let replyStart = child.cpuMark
                    speaking = await child.cpuPercent(over: 3)
                    // A reply still playing after the wait counts as unfinished (`SelfEchoVerdict.finished`).
                    let ended = await child.waitFor(#""from":"speaking""#, upTo: plan.replyWait)
                    if ended { wholeReply = child.cpuPercent(since: replyStart) }
                    await timeline?.mark(ended ? "reply done" : "reply unfinished")
                    // The echo's last words close an utterance only after the silence window.
                    try await Task.sleep(for: .seconds(3))
                }
                if let timeline { figures.timeline = await timeline.finish() }
                await child.stop()
                if mode == "webrtc" {
                    figures.selfEchoUnderruns += child.playbackUnderruns
                    figures.recordings.check("\(mode)-\(trial)", in: plan.record, child: child)
                }
                let relay = plan.conditions.realtime ? try relayRecord(gateway) : nil
                echo.add(SelfEchoVerdict(events: child.events, turnEvent: plan.turnEvent, relay: relay))
                if mode == "webrtc" {
                    figures.idleCPUPercent.append(idle)
                    if let speaking { figures.speakingCPUPercent.append(speaking) }
                    if let wholeReply { figures.wholeReplyCPUPercent.append(wholeReply) }
                }
            }
            figures.selfEcho[mode] = echo
        }
    }

    /// What the realtime relay recorded since the last call (which it then forgets): its log (cancels and their
    /// reasons, its VAD's clears) and how many realtime turns it finished.
    static func relayRecord(_ gateway: ReferenceGatewayProcess) throws -> SelfEchoVerdict.RelayRecord {
        let log = try gateway.control(#"{"cmd": "relay-log", "clear": true}"#)["log"]?.arrayValue ?? []
        let turns = try gateway.control(#"{"cmd": "relay-turns", "clear": true}"#)["turns"]?.arrayValue ?? []
        return SelfEchoVerdict.RelayRecord(log: log, turns: turns.filter { $0["mode"] == "realtime" }.count)
    }

    /// ERLE on the loopback with the reply's own voice as the far end (twice: the first pass converges).
    static func replyERLE(_ reply: String, sink: String, source: String, logger: Logger) async throws -> EchoBenchmark.Loopback {
        let synthesizer = try EspeakSynthesizer(logger: logger)
        let chunk = try await synthesizer.synthesizeAll(reply)
        // At most 12 s of it: a long reply measures no better, only longer.
        let speech = Array(try PCMBuffer(sampleRate: chunk.sampleRate, samples: chunk.samples).resampled(to: AudioFrame.sampleRate).samples
            .prefix(12 * AudioFrame.sampleRate))
        let result = try await EchoBenchmark.loopback(
            far: speech + speech, sink: sink, source: source,
            convergenceSeconds: Double(speech.count) / Double(AudioFrame.sampleRate), logger: logger)
        return result
    }
}
