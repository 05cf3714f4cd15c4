import AudioIO
import Foundation
import TalkLogging

extension OpenClawTalk.Bench {
    /// `bench audio`: PulseAudio capture latency, idle capture CPU, playback start and stop latency.
    struct Audio: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "audio",
            abstract: "Measure PulseAudio capture latency and CPU, and playback start/stop latency.",
            discussion: "Playback is listened to on the sink's monitor source, so run it where a test tone may be heard "
                + "(or against a headless server: scripts/with-pulse.sh openclaw-talk bench audio).",
            options: [
                .flag("json", help: "Print the figures as JSON."),
                .option("source", value: "name", help: "The source to measure capture on (default: the server's default)."),
                .option("sink", value: "name", help: "The sink to measure playback on (default: the server's default)."),
                .option("seconds", value: "n", help: "How long to measure idle capture (default 3)."),
                .option("trials", value: "n", help: "Playback start/stop trials (default 5)."),
            ]
        )

        var json: Bool
        var source: String?
        var sink: String?
        var seconds: Double
        var trials: Int

        init(_ parsed: ParsedArguments) throws {
            json = parsed.flag("json")
            source = parsed.option("source")
            sink = parsed.option("sink")
            seconds = try parsed.doubleOption("seconds", range: 0.5...600) ?? 3
            trials = try parsed.intOption("trials", range: 1...100) ?? 5
        }

        func run() async throws {
            let benchmark = PulseBenchmark(
                source: source, sink: sink, idleSeconds: seconds, trials: trials,
                logger: Logger(label: "openclaw-talk.bench.audio"))
            let report = try await benchmark.run()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                encoder.nonConformingFloatEncodingStrategy = .convertToString(
                    positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
                return
            }
            func ms(_ v: Double) -> String { String(format: "%.1f ms", v) }
            print("PulseAudio (source \(report.source), sink \(report.sink), monitor \(report.monitor))")
            print("  capture-to-frame latency   p50 \(ms(report.captureLatencyP50Ms))  p95 \(ms(report.captureLatencyP95Ms))"
                + (report.serverCaptureLatencyMs.map { "  (server reports \(ms($0)))" } ?? ""))
            print("  frame age at arrival       p50 \(ms(report.frameAgeP50Ms))  p95 \(ms(report.frameAgeP95Ms))")
            print("  idle capture CPU           \(String(format: "%.2f", report.idleCaptureCPUPercent)) % of one core over \(report.idleCaptureSeconds) s")
            print("  playback start latency     median \(ms(report.playbackStartLatencyMs.median))  max \(ms(report.playbackStartLatencyMs.max))")
            print("  playback stop latency      median \(ms(report.playbackStopLatencyMs.median))  max \(ms(report.playbackStopLatencyMs.max))")
            print("  (\(report.trials) playback trials)")
        }
    }
}
