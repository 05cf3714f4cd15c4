import AudioIO
import Foundation
import TalkBench
import TalkLogging

extension OpenClawTalk.Bench {
    /// `bench aec`: echo return loss enhancement of the in-process echo canceller on synthetic echo paths and
    /// through a sound server's loopback, what double talk keeps of the user's speech, CPU per 20 ms frame.
    struct Aec: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "aec",
            abstract: "Measure echo cancellation: ERLE (synthetic and live loopback), double talk, CPU per frame.",
            discussion: "The live half plays speech into the sink and listens on its monitor (or --source), so run it "
                + "where speech may be heard, or against a headless server: scripts/with-pulse.sh openclaw-talk bench aec. "
                + "Speech comes from Debian's pocketsphinx-testdata.",
            options: BenchReportOptions.options + AudioDeviceOptions.options(.devices, help: .loopback) + [
                .flag("no-live", help: "Skip the sound-server loopback."),
                .option("linear-stage-ms", value: "ms", help: "Speex's linear stage in front of WebRTC's canceller: its echo tail (default 200), 0 for none."),
                .option("replay", value: "dir", help: "Replay a capture recorded with OPENCLAW_TALK_AEC_RECORD=dir openclaw-talk run: "
                    + "when the double-talk detector heard the user over the echo. Nothing else is measured."),
                .option("output", value: "out.wav", help: "With --replay: write what the capture would have passed on."),
                .flag("released-words", help: "With --replay (one barge-in recording of bench talk, or a folder of them): the words its held "
                    + "utterance's release sends, recognised as bench talk judges a relay turn, with and without the linear stage's onset."),
                .option("release-linear", value: "B:A,...", help: "With --released-words: send the linear stage's output from B ms before "
                    + "the user's onset to A ms after it, each pair a variant (default: the release's own, 60:300); 0:0, every frame fully cleaned, is judged first."),
                .option("decision-ms", value: "ms", help: "With --released-words or --local-words: the barge-in this long after the user's start (default 420)."),
                .flag("local-words", help: "With --replay (one barge-in recording of bench talk, or a folder of them): the words the session's own "
                    + "recogniser sends (run --stt local), from the live decode and decoded again from the user's onset at the barge-in."),
                .option("grammar", value: "file.gram", help: "With --local-words: the session recognised with this JSGF grammar (bench talk --grammar)."),
                .flag("evidence", help: "With --replay (recordings of bench talk, or a folder of them): where the native loop's barge-in evidence "
                    + "would first let words over the reply stop it, before the user (the reply cutting itself off) and after (detection)."),
                .option("settling-ms", value: "ms,...", help: "With --evidence: settling windows after a playback gap or a reference move "
                    + "to compare, each a variant (default 0,800; 0: no window)."),
                .flag("realtime", help: "With --replay (recordings of bench talk --mode realtime, or a folder of them): when the realtime uplink gate "
                    + "opens, the relay's VAD hears the user and the answer stops, and the words of the turn the relay commits."),
            ]
        )

        static let speechFolder = "/usr/share/pocketsphinx/test/data"

        /// `--json`, `--report DIR`.
        var reporting: BenchReportOptions
        /// `--sink` and `--source`: the live loopback.
        var devices: AudioDeviceOptions
        var live: Bool
        var options = EchoCancellerOptions()
        var replay: String?
        var output: String?
        var releasedWords: Bool
        var realtime: Bool
        var releaseLinear: [(Int, Int)] = []
        var decisionMs = 420
        var localWords: Bool
        var grammar: String?
        var evidence: Bool
        var settlingMs = [0, 800]

        init(_ parsed: ParsedArguments) throws {
            reporting = BenchReportOptions(parsed)
            devices = try AudioDeviceOptions(parsed, .devices)
            live = !parsed.flag("no-live")
            if let ms = try parsed.intOption("linear-stage-ms", range: 0...500) { options.linearStageMs = ms }
            replay = parsed.option("replay")
            output = parsed.option("output")
            if output != nil, replay == nil { throw ValidationError("'--output' goes with '--replay DIR'") }
            releasedWords = parsed.flag("released-words")
            if releasedWords, replay == nil { throw ValidationError("'--released-words' goes with '--replay DIR'") }
            realtime = parsed.flag("realtime")
            if realtime, replay == nil { throw ValidationError("'--realtime' goes with '--replay DIR'") }
            for pair in (parsed.option("release-linear") ?? "").split(separator: ",") {
                let parts = pair.split(separator: ":").compactMap { Int($0) }
                guard parts.count == 2 else { throw ValidationError("'--release-linear' takes B:A pairs (ms), not '\(pair)'") }
                releaseLinear.append((parts[0], parts[1]))
            }
            if let ms = try parsed.intOption("decision-ms", range: 0...5_000) { decisionMs = ms }
            localWords = parsed.flag("local-words")
            if localWords, replay == nil || releasedWords { throw ValidationError("'--local-words' goes with '--replay DIR', without '--released-words'") }
            evidence = parsed.flag("evidence")
            if evidence, replay == nil || releasedWords || localWords || realtime {
                throw ValidationError("'--evidence' goes with '--replay DIR', without '--released-words', '--local-words' or '--realtime'")
            }
            if let list = parsed.option("settling-ms") {
                guard evidence else { throw ValidationError("'--settling-ms' goes with '--evidence'") }
                settlingMs = try list.split(separator: ",").map {
                    guard let ms = Int($0), (0...5_000).contains(ms) else { throw ValidationError("'--settling-ms' takes ms from 0 to 5000, not '\($0)'") }
                    return ms
                }
            }
            grammar = parsed.option("grammar")
            if grammar != nil, !localWords { throw ValidationError("'--grammar' goes with '--local-words'") }
        }

        func run() async throws {
            if let replay, realtime { return try await replayRealtime(replay) }
            if let replay, evidence { return try await replayEvidence(replay) }
            if let replay, releasedWords { return try await replayReleasedWords(replay) }
            if let replay, localWords { return try await replayLocalWords(replay) }
            if let replay { return try replayRecording(replay) }
            var logger = Logger(label: "openclaw-talk.bench.aec")
            logger.logLevel = .warning
            let far = try ["goforward.raw", "numbers.raw"].flatMap {
                try AudioFileReader.readMono(path: "\(Self.speechFolder)/\($0)").samples
            }
            let talker = try AudioFileReader.readMono(path: "\(Self.speechFolder)/something.raw").samples
            let synthetic = try EchoBenchmark.synthetic(far: far, talker: talker, options: options)
            let costs = synthetic.microsecondsPerFrame
            let median = BenchStatistics.percentile(costs, 0.5) ?? 0
            var report = EchoBenchmark.Report(
                signal: "pocketsphinx-testdata goforward.raw + numbers.raw (far end), something.raw (double talk)",
                convergenceSeconds: EchoBenchmark.convergenceSeconds, synthetic: synthetic.results,
                doubleTalkCorrelation: synthetic.doubleTalkCorrelation, microsecondsPerFrameMedian: median,
                microsecondsPerFrameP95: BenchStatistics.percentile(costs, 0.95) ?? 0,
                coreSharePercent: median / Double(AudioFrame.durationMs * 1000) * 100)
            report.linearStageMs = options.linearStageMs
            if live {
                do {
                    let (sinkName, sourceName) = try await TalkLoopBenchmark.loopbackDevices(sink: devices.sink, source: devices.source, logger: logger)
                    report.loopback = try await EchoBenchmark.loopback(
                        far: far + far, sink: sinkName, source: sourceName,
                        convergenceSeconds: Double(far.count) / Double(AudioFrame.sampleRate), options: options, logger: logger)
                } catch {
                    report.loopbackUnavailable = String(describing: error)
                }
            } else {
                report.loopbackUnavailable = "skipped (--no-live)"
            }
            if !(try await reporting.publish(name: "aec", json: { try jsonText(report) })) { printText(report) }
        }

        private func jsonText(_ report: EchoBenchmark.Report) throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            return String(decoding: try encoder.encode(report), as: UTF8.self)
        }

        private func printText(_ report: EchoBenchmark.Report) {
            func db(_ v: Double) -> String { String(format: "%.1f dB", v) }
            let stage = report.linearStageMs > 0 ? "Speex linear stage \(report.linearStageMs) ms, then " : ""
            print("Echo cancellation (\(stage)WebRTC audio processing, 16 kHz; \(report.signal))")
            for s in report.synthetic {
                print("  synthetic path \(s.delayMs) ms".padding(toLength: 28, withPad: " ", startingAt: 0) + "ERLE \(db(s.erleDb)) (after \(report.convergenceSeconds) s)")
            }
            print(String(format: "  double talk               user's speech kept at correlation %.2f", report.doubleTalkCorrelation))
            print(String(format: "  CPU per 20 ms frame       median %.0f µs  p95 %.0f µs  (%.2f %% of a core)",
                         report.microsecondsPerFrameMedian, report.microsecondsPerFrameP95, report.coreSharePercent))
            guard let l = report.loopback else {
                print("  live loopback: not measured: \(report.loopbackUnavailable ?? "no server")")
                return
            }
            let lag = l.alignedLagMs.map { String(format: "%.0f ms", $0) } ?? "unknown"
            print("  live loopback \(l.sink) -> \(l.source)  ERLE \(db(l.erleDb)) (after \(String(format: "%.1f", l.convergenceSeconds)) s),"
                + " echo lag \(lag), library delay estimate \(l.estimatedDelayMs.map { "\($0) ms" } ?? "unknown")")
        }
    }
}
