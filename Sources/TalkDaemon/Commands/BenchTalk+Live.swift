import AudioIO
import Foundation
import SessionBridge
import SpeechSynthesis
import TalkLogging

/// The live half of `bench talk`: sessions on the sound server's loopback.
struct LiveTalkFigures {
    struct SelfEcho {
        var trials = 0
        /// Trials in which the reply's own echo cut it off (a barge-in event).
        var selfInterruptions = 0
        /// Trials in which the echo went out to the Gateway as a turn of its own.
        var echoTurns = 0
        /// Trials where the clip did not lead to a spoken reply (nothing to measure).
        var noReply = 0
        var json: JSONValue {
            ["trials": .int(Int64(trials)), "selfInterruptions": .int(Int64(selfInterruptions)), "echoTurns": .int(Int64(echoTurns)),
             "noReply": .int(Int64(noReply))]
        }
    }

    var sink: String
    var source: String
    var selfEcho: [String: SelfEcho] = [:]
    var idleCPUPercent: [Double] = []
    var speakingCPUPercent: [Double] = []
    /// Raw capture over cleaned capture of the reply's own voice (espeak-ng) on the loopback.
    var erleDb: Double?
    var erleUnavailable: String?
    /// CPU and memory over the first session with echo cancellation (`ResourceTimeline`).
    var timeline: JSONValue?

    var json: JSONValue {
        var object: [String: JSONValue] = [
            "sink": .string(sink), "source": .string(source),
            "selfEcho": .object(selfEcho.mapValues(\.json)),
            "cpuPercent": ["idle": TalkBenchReport.summary(idleCPUPercent), "speaking": TalkBenchReport.summary(speakingCPUPercent)],
        ]
        object["erleDb"] = erleDb.map { .double(($0 * 10).rounded() / 10) } ?? .null
        if let erleUnavailable { object["erleUnavailable"] = .string(erleUnavailable) }
        if let timeline { object["timeline"] = timeline }
        return .object(object)
    }

    var text: [String] {
        var lines = [String(format: "  ERLE of the reply's voice, %@ -> %@: %@", sink, source, erleDb.map { String(format: "%.1f dB", $0) } ?? "not measured: \(erleUnavailable ?? "")")]
        let idle = TalkBenchReport.percentile(idleCPUPercent, 0.5) ?? 0
        let speaking = TalkBenchReport.percentile(speakingCPUPercent, 0.5) ?? 0
        lines.append(String(format: "  CPU of a live session (echo cancellation on, median): idle %.1f %%, speaking %.1f %% of a core", idle, speaking))
        for (mode, figures) in selfEcho.sorted(by: { $0.key > $1.key }) {
            lines.append("  self-echo, --aec \(mode): cut itself off in \(figures.selfInterruptions) of \(figures.trials) trials, "
                + "its echo sent as a turn in \(figures.echoTurns)" + (figures.noReply > 0 ? " (\(figures.noReply) without a reply)" : ""))
        }
        return lines
    }
}

extension OpenClawTalk.Bench.Talk {
    static let speechFolder = "/usr/share/pocketsphinx/test/data"

    /// `trials` sessions per mode (echo cancellation on, then off) on the loopback: a clip played into the sink
    /// is heard, the reply plays into the same sink and comes back on the source. CPU is sampled in the sessions
    /// with echo cancellation, idle before the clip and while the reply plays.
    static func live(
        trials: Int, sink: String, source: String, gateway: ReferenceGatewayProcess, folder: String, logger: Logger
    ) async throws -> LiveTalkFigures {
        var figures = LiveTalkFigures(sink: sink, source: source)
        let clip = try AudioFileReader.readMono(path: speechFolder + "/goforward.raw")
        let speaker = try PulsePlayback(sink: sink, logger: logger)
        do {
            try await selfEchoTrials(trials, into: &figures, speaker: speaker, clip: clip, gateway: gateway, folder: folder)
        } catch {
            await speaker.close()
            throw error
        }
        await speaker.close()
        return figures
    }

    private static func selfEchoTrials(
        _ trials: Int, into figures: inout LiveTalkFigures, speaker: PulsePlayback, clip: PCMBuffer, gateway: ReferenceGatewayProcess,
        folder: String
    ) async throws {
        let (sink, source) = (figures.sink, figures.source)
        var logger = Logger(label: "openclaw-talk.bench.talk")
        logger.logLevel = .warning
        do {
            figures.erleDb = try await replyERLE(sink: sink, source: source, logger: logger)
        } catch {
            figures.erleUnavailable = String(describing: error)
        }
        for mode in ["webrtc", "off"] {
            var echo = LiveTalkFigures.SelfEcho()
            for trial in 0..<trials {
                let home = "\(folder)/\(mode)-\(trial)"
                try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
                let child = try TalkChild(
                    ["--gateway", gateway.startup.url, "--token", token, "--source", source, "--sink", sink, "--aec", mode, "--json",
                     "--silence-ms", "\(silenceMs)", "--seconds", "90"],
                    home: home)
                let timeline = mode == "webrtc" && trial == 0 ? ResourceTimeline(child: child) : nil
                await timeline?.begin()
                guard await child.waitFor(#""to":"listening""#, upTo: .seconds(60)) else {
                    await child.stop()
                    throw ValidationError("the live session did not start: \(child.stderr.suffix(600))")
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
                    _ = await child.waitFor(#""from":"speaking""#, upTo: .seconds(60))
                    await timeline?.mark("reply done")
                    // The echo's last words close an utterance only after the silence window.
                    try await Task.sleep(for: .seconds(3))
                }
                if let timeline { figures.timeline = await timeline.finish() }
                await child.stop()
                let events = child.events
                echo.trials += 1
                if speaking == nil { echo.noReply += 1 }
                if events.contains(where: { $0["event"] == "bargeIn" }) { echo.selfInterruptions += 1 }
                if events.filter({ $0["event"] == "transcriptSent" }).count > 1 { echo.echoTurns += 1 }
                if mode == "webrtc" {
                    figures.idleCPUPercent.append(idle)
                    if let speaking { figures.speakingCPUPercent.append(speaking) }
                }
            }
            figures.selfEcho[mode] = echo
        }
    }

    /// ERLE on the loopback with the reply's own voice as the far end (twice: the first pass converges).
    static func replyERLE(sink: String, source: String, logger: Logger) async throws -> Double {
        let synthesizer = try EspeakSynthesizer(logger: logger)
        let chunk = try await synthesizer.synthesizeAll(reply)
        let speech = try PCMBuffer(sampleRate: chunk.sampleRate, samples: chunk.samples).resampled(to: AudioFrame.sampleRate).samples
        let result = try await EchoBenchmark.loopback(
            far: speech + speech, sink: sink, source: source,
            convergenceSeconds: Double(speech.count) / Double(AudioFrame.sampleRate), logger: logger)
        return result.erleDb
    }
}
