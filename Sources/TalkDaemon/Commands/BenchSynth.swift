import Foundation
import SpeechSynthesis
import TalkLogging

extension OpenClawTalk.Bench {
    /// `bench synth`: time from a sentence's text to its first audio, and synthesis real-time factor.
    struct Synth: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "synth",
            abstract: "Measure local speech synthesis: first audio after a sentence arrives, and real-time factor.",
            discussion: "First audio is timed from the delta that completes a sentence to the first chunk of its audio "
                + "(the Talk loop's target is 150 ms); the real-time factor is espeak-ng CPU time per second of speech.",
            options: BenchReportOptions.options + [
                .option("voice", value: "name", help: "espeak-ng voice (default en-us)."),
                .option("rate", value: "wpm", help: "Words per minute, 80-450 (default 175)."),
                .option("trials", value: "n", help: "First-audio trials (default 50)."),
            ]
        )

        /// `--json`, `--report DIR`.
        var reporting: BenchReportOptions
        var benchmark = SynthesisBenchmark()

        init(_ parsed: ParsedArguments) throws {
            reporting = BenchReportOptions(parsed)
            if let voice = parsed.option("voice") { benchmark.settings.voice = voice }
            if let rate = try parsed.intOption("rate", range: 80...450) { benchmark.settings.rateWPM = rate }
            if let trials = try parsed.intOption("trials", range: 1...10_000) { benchmark.trials = trials }
        }

        func run() async throws {
            var logger = Logger(label: "openclaw-talk.bench")
            logger.logLevel = .warning
            let report = try await benchmark.run(with: try EspeakSynthesizer(logger: logger))
            if try await reporting.publish(name: "synth", json: { try BenchReportOptions.encoded(report) }) { return }
            func ms(_ v: Double) -> String { String(format: "%.1f ms", v) }
            print("Speech synthesis (\(report.engine), voice \(report.voice), \(report.rateWPM) WPM, \(report.sampleRate) Hz)")
            print("  first audio after \"\(report.sentence)\" arrives   p50 \(ms(report.firstAudioMs.p50))  "
                + "p95 \(ms(report.firstAudioMs.p95))  max \(ms(report.firstAudioMs.max))  (\(report.trials) trials, target "
                + "\(ms(report.targetFirstAudioMs)))")
            print("  first chunk with speech in it                       p50 \(ms(report.firstVoicedAudioMs.p50))  "
                + "p95 \(ms(report.firstVoicedAudioMs.p95))  max \(ms(report.firstVoicedAudioMs.max))")
            print("  first audio of the process (engine start)   \(ms(report.coldFirstAudioMs))")
            print(String(format: "  real-time factor   %.4f CPU, %.4f wall (%.1f s paragraph)", report.rtf, report.wallRtf,
                         report.paragraphAudioSeconds))
        }
    }
}
