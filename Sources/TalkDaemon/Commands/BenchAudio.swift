import AudioIO
import Foundation
import TalkBench
import TalkLogging

extension OpenClawTalk.Bench {
    /// `bench audio`: Opus encode/decode cost and bitrate, resampler cost; PulseAudio capture latency, idle
    /// capture CPU, playback start and stop latency (when a sound server is reachable).
    struct Audio: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "audio",
            abstract: "Measure Opus and resampler cost, PulseAudio capture latency and CPU, playback start/stop latency.",
            discussion: "Playback is listened to on the sink's monitor source, so run it where a test tone may be heard "
                + "(or against a headless server: scripts/with-pulse.sh openclaw-talk bench audio).",
            options: BenchReportOptions.options + AudioDeviceOptions.options(.devices) + [
                .option("seconds", value: "n", help: "How long to measure idle capture (default 3)."),
                .option("trials", value: "n", help: "Playback start/stop trials (default 5)."),
            ]
        )

        /// `--json`, `--report DIR`.
        var reporting: BenchReportOptions
        /// `--source` and `--sink`: where capture and playback are measured.
        var devices: AudioDeviceOptions
        var seconds: Double
        var trials: Int

        init(_ parsed: ParsedArguments) throws {
            reporting = BenchReportOptions(parsed)
            devices = try AudioDeviceOptions(parsed, .devices)
            seconds = try parsed.doubleOption("seconds", range: 0.5...600) ?? 3
            trials = try parsed.intOption("trials", range: 1...100) ?? 5
        }

        /// Both halves in one JSON object; `pulse` is null (with `pulseUnavailable` saying why) without a server.
        struct Report: Encodable {
            var opus: OpusBenchmarkReport
            var pulse: PulseBenchmark.Report?
            var pulseUnavailable: String?
        }

        func run() async throws {
            let speechPath = "/usr/share/pocketsphinx/test/data/goforward.raw"
            let speech = try? AudioFileReader.readMono(path: speechPath)
            let opus = try OpusBenchmark.run(speech: speech?.samples, signalName: speech == nil ? nil : "goforward.raw")
            var report = Report(opus: opus)
            do {
                report.pulse = try await PulseBenchmark(
                    source: devices.source, sink: devices.sink, idleSeconds: seconds, trials: trials,
                    logger: Logger(label: "openclaw-talk.bench.audio")
                ).run()
            } catch {
                report.pulseUnavailable = String(describing: error)
            }
            if try await reporting.publish(name: "audio", json: { try BenchReportOptions.encoded(report) }) { return }
            func ms(_ v: Double) -> String { String(format: "%.1f ms", v) }
            func us(_ v: Double) -> String { String(format: "%.0f µs", v) }
            print("Opus (\(opus.signal), \(opus.sampleRate) Hz, \(opus.bitrate / 1000) kbit/s, complexity \(opus.complexity))")
            print("  encode per 20 ms frame     median \(us(opus.encodeMicrosecondsMedian))  p95 \(us(opus.encodeMicrosecondsP95))")
            print("  decode per 20 ms frame     median \(us(opus.decodeMicrosecondsMedian))  p95 \(us(opus.decodeMicrosecondsP95))")
            print("  sent                       \(String(format: "%.0f", opus.bytesPerSecond)) bytes/s (PCM16 would be 32000)")
            for r in opus.resampler {
                print("  resample \(r.fromRate)->\(r.toRate) (\(r.quality))  \(us(r.microsecondsPerAudioSecond)) per audio second")
            }
            guard let pulse = report.pulse else {
                print("PulseAudio: not measured: \(report.pulseUnavailable ?? "no server")")
                return
            }
            print("PulseAudio (source \(pulse.source), sink \(pulse.sink), monitor \(pulse.monitor))")
            print("  capture-to-frame latency   p50 \(ms(pulse.captureLatencyP50Ms))  p95 \(ms(pulse.captureLatencyP95Ms))"
                + (pulse.serverCaptureLatencyMs.map { "  (server reports \(ms($0)))" } ?? ""))
            print("  frame age at arrival       p50 \(ms(pulse.frameAgeP50Ms))  p95 \(ms(pulse.frameAgeP95Ms))")
            print("  idle capture CPU           \(String(format: "%.2f", pulse.idleCaptureCPUPercent)) % of one core over \(pulse.idleCaptureSeconds) s")
            if let start = pulse.playbackStartLatencyMs {
                print("  playback start latency     median \(ms(start.median))  max \(ms(start.max))")
            } else {
                print("  playback start latency     not measured: \(pulse.playbackStartUnmeasured ?? "no trial was heard")")
            }
            print("  playback stop latency      median \(ms(pulse.playbackStopLatencyMs.median))  max \(ms(pulse.playbackStopLatencyMs.max))")
            print("  (\(pulse.trials) playback trials)")
        }
    }
}
