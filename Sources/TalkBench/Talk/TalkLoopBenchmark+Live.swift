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

        /// What a turn sent to the Gateway shows as: in realtime mode the relay's final of the user's words.
        var turnEvent: JSONValue { conditions.realtime ? "finalTranscript" : "transcriptSent" }

        /// A reply of `replySeconds` needs this long to play, with the local voice at its slowest.
        var replyWait: Duration { .seconds(30 + 2 * (conditions.replySeconds ?? 10)) }

        func session(home: String, aec: String, gateway: ReferenceGatewayProcess, record name: String) async throws -> TalkChild {
            try await TalkChild(
                ["--gateway", gateway.startup.url, "--token", token, "--source", source, "--sink", sink, "--aec", aec, "--json",
                 "--silence-ms", "\(silenceMs)", "--seconds", "\(90 + 3 * (conditions.replySeconds ?? 10))"]
                    + conditions.runArguments,
                home: home, environment: record.map { ["OPENCLAW_TALK_AEC_RECORD": "\($0)/\(name)"] } ?? [:])
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
                figures.bargeIn = try await bargeInTrials(plan.bargeInTrials, plan: plan, speaker: speaker, clip: clip, gateway: gateway)
            }
        } catch {
            await speaker.close()
            throw error
        }
        await speaker.close()
        return figures
    }

    private static func selfEchoTrials(
        _ plan: LivePlan, into figures: inout LiveTalkFigures, speaker: PulsePlayback, clip: PCMBuffer, gateway: ReferenceGatewayProcess
    ) async throws {
        let (sink, source) = (figures.sink, figures.source)
        var logger = Logger(label: "openclaw-talk.bench.talk")
        logger.logLevel = .warning
        do {
            figures.erleDb = try await replyERLE(plan.conditions.reply, sink: sink, source: source, logger: logger)
        } catch {
            figures.erleUnavailable = String(describing: error)
        }
        for (mode, trials) in [("webrtc", plan.trials), ("off", plan.offTrials)] {
            var echo = LiveTalkFigures.SelfEcho()
            for trial in 0..<trials {
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
                if await child.waitFor(#""event":"speakingStarted""#, upTo: .seconds(30)) {
                    await timeline?.mark("speaking")
                    speaking = await child.cpuPercent(over: 3)
                    _ = await child.waitFor(#""from":"speaking""#, upTo: plan.replyWait)
                    await timeline?.mark("reply done")
                    // The echo's last words close an utterance only after the silence window.
                    try await Task.sleep(for: .seconds(3))
                }
                if let timeline { figures.timeline = await timeline.finish() }
                await child.stop()
                let events = child.events
                echo.trials += 1
                if speaking == nil { echo.noReply += 1 }
                if let cut = events.first(where: { $0["event"] == "bargeIn" }) {
                    echo.selfInterruptions += 1
                    echo.interruptingPartials.append(cut["partial"]?.stringValue ?? "")
                }
                if events.filter({ $0["event"] == plan.turnEvent }).count > 1 { echo.echoTurns += 1 }
                if mode == "webrtc" {
                    figures.idleCPUPercent.append(idle)
                    if let speaking { figures.speakingCPUPercent.append(speaking) }
                }
            }
            figures.selfEcho[mode] = echo
        }
    }

    /// ERLE on the loopback with the reply's own voice as the far end (twice: the first pass converges).
    static func replyERLE(_ reply: String, sink: String, source: String, logger: Logger) async throws -> Double {
        let synthesizer = try EspeakSynthesizer(logger: logger)
        let chunk = try await synthesizer.synthesizeAll(reply)
        // At most 12 s of it: a long reply measures no better, only longer.
        let speech = Array(try PCMBuffer(sampleRate: chunk.sampleRate, samples: chunk.samples).resampled(to: AudioFrame.sampleRate).samples
            .prefix(12 * AudioFrame.sampleRate))
        let result = try await EchoBenchmark.loopback(
            far: speech + speech, sink: sink, source: source,
            convergenceSeconds: Double(speech.count) / Double(AudioFrame.sampleRate), logger: logger)
        return result.erleDb
    }
}
