import AudioIO
import Foundation
import SessionBridge
import SpeechRecognition
import TalkBench
import TalkLogging

extension OpenClawTalk.Bench {
    /// `bench talk`: the Talk loop's own latencies, end to end through `openclaw-talk run` with the reference
    /// Gateway answering at once. File devices time the turns exactly (sample n of the output track plays while
    /// sample n of the input is heard); live sessions on the sound server's loopback measure CPU and how often
    /// the reply's echo cuts the reply off, with echo cancellation and without (BenchTalk+Live).
    struct Talk: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "talk",
            abstract: "Measure the Talk loop: speech end to transcript sent and to first reply audio, barge-in, ERLE, CPU.",
            discussion: "Plays the manifest's clips as one microphone track, each next clip cutting into the reply to "
                + "the one before. The live half plays into the sink and listens on its monitor (or --source): run it "
                + "against a headless server, scripts/with-pulse.sh openclaw-talk bench talk. Starts the reference "
                + "Gateway (tools/reference-gateway, python3).",
            options: BenchReportOptions.options + [
                .option("manifest", value: "file.tsv", help: "Clips and transcripts (default ../shared/corpus/speech/manifest.tsv)."),
                .option("clips", value: "n", help: "Use the first n clips (default: all)."),
                .option("trials", value: "n", help: "Live self-echo sessions with echo cancellation (default 3; 0 skips the live half)."),
                .option("off-trials", value: "n", help: "Live self-echo sessions without echo cancellation (default: as --trials)."),
                .option("barge-in-trials", value: "n", help: "Live sessions with the user speaking over the reply (default: as --trials)."),
                .option("voice", value: "local|gateway", help: "Whose voice speaks the live replies (default local: a Gateway without a Talk provider)."),
                .option("reply-seconds", value: "n", help: "A live reply about this long (default: one of about 6 s)."),
                .option("grammar", value: "file.gram", help: "The live sessions recognise only this JSGF grammar's sentences (default: dictation); the barge-in clips are then heard as its sentences."),
                SoundServerOption.spec(help: "Check that the sound server answering is this one (run under scripts/with-pulse.sh or with-pipewire.sh)."),
                .option("record", value: "dir", help: "Record each live session's echo cancellation to dir/<session>, for bench aec --replay."),
            ] + AudioDeviceOptions.options(.devices, help: .loopback) + [
                RepositoryOption.spec,
                .option("stt", value: "local|auto|gateway", help: "Whose words the file session sends (default local: this client's own figures)."),
            ]
        )

        static let silenceMs = TalkBenchReport.silenceMs
        /// About 6 s of speech in words the corpus's clips hardly use, so a clip cuts in (the text guard) and the
        /// reply's echo cannot pass for the user.
        static let reply = "Sure, here is what I found about that. The forecast stays mild and clear all week, with a light breeze."

        /// `--json`, `--report DIR`.
        var reporting: BenchReportOptions
        var manifest: String
        var clipLimit: Int?
        var trials: Int
        var offTrials: Int
        var bargeInTrials: Int
        var conditions: TalkBenchConditions
        var record: String?
        /// `--sink` and `--source`: the live half's loopback.
        var devices: AudioDeviceOptions
        var repository: String
        /// `run --stt` for the file session. Local by default: with the reference Gateway's relay (`auto`) each
        /// transcript also waits for its final, which it finds by matching the clip against the whole corpus in
        /// pure Python, a Gateway's time rather than this client's.
        var stt: String

        init(_ parsed: ParsedArguments) throws {
            reporting = BenchReportOptions(parsed)
            manifest = parsed.option("manifest") ?? "../shared/corpus/speech/manifest.tsv"
            clipLimit = try parsed.intOption("clips", range: 1...10_000)
            trials = try parsed.intOption("trials", range: 0...100) ?? 3
            offTrials = try parsed.intOption("off-trials", range: 0...100) ?? trials
            bargeInTrials = try parsed.intOption("barge-in-trials", range: 0...100) ?? trials
            conditions = try TalkBenchConditions(parsed)
            record = parsed.option("record")
            devices = try AudioDeviceOptions(parsed, .devices)
            repository = RepositoryOption.folder(parsed)
            stt = parsed.option("stt") ?? "local"
            guard ["local", "auto", "gateway"].contains(stt) else {
                throw ValidationError("Invalid value '\(stt)' for '--stt': expected local, gateway or auto")
            }
        }

        func run() async throws {
            var logger = Logger(label: "openclaw-talk.bench.talk")
            logger.logLevel = .warning
            var clips = try BenchManifest.load(path: manifest).entries
            if let clipLimit { clips = Array(clips.prefix(clipLimit)) }
            let root = try Self.temporaryFolder()
            // OPENCLAW_TALK_BENCH_KEEP keeps the sessions' folders (events, logs) for a look afterwards.
            let keep = ProcessInfo.processInfo.environment["OPENCLAW_TALK_BENCH_KEEP"] != nil
            defer { if keep { FileHandle.standardError.write(Data("bench talk: sessions kept in \(root)\n".utf8)) } else { try? FileManager.default.removeItem(atPath: root) } }
            let gateway = try await ReferenceGatewayProcess.forBenchmark(repositoryRoot: repository, arguments: ["--token", Self.token, "--auto-approve"])
            defer { gateway.stop() }
            // At once, in the local voice: what is timed is this program, not an agent or a Gateway's voice.
            // The file session's turns in the local voice, the short reply: what is timed is this program.
            _ = try gateway.control(#"{"cmd": "chat-script", "reply": "\#(Self.reply)", "delayMs": 0}"#)
            _ = try gateway.control(TalkBenchConditions.fileSession.talkConfig(silenceMs: Self.silenceMs))

            var report = try await Self.fileTurns(clips.map(\.path), gateway: gateway, folder: root + "/files", stt: stt)
            report.clips = clips.count
            if trials + offTrials + bargeInTrials > 0 {
                do {
                    let (sinkName, sourceName) = try await Self.loopbackDevices(sink: devices.sink, source: devices.source, logger: logger)
                    _ = try gateway.control(#"{"cmd": "chat-script", "reply": "\#(conditions.reply)", "delayMs": 0}"#)
                    _ = try gateway.control(conditions.talkConfig(silenceMs: Self.silenceMs))
                    let plan = LivePlan(
                        trials: trials, offTrials: offTrials, bargeInTrials: bargeInTrials, conditions: conditions, sink: sinkName,
                        source: sourceName, folder: root + "/live", record: record)
                    report.live = try await Self.live(plan, gateway: gateway, logger: logger)
                } catch {
                    report.liveUnavailable = String(describing: error)
                }
            } else {
                report.liveUnavailable = "skipped (--trials 0)"
            }
            if !(try await reporting.publish(name: "talk", json: { report.json.jsonText })) { print(report.text) }
        }

        static let token = "bench-talk-token"

        static func temporaryFolder() throws -> String {
            var template = Array((NSTemporaryDirectory() + "openclaw-talk-bench.XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else { throw ValidationError("mkdtemp failed: errno \(errno)") }
            return String(cString: made)
        }

        /// The sink asked for (or the default) and the source asked for (or that sink's monitor).
        static func loopbackDevices(sink: String?, source: String?, logger: Logger) async throws -> (sink: String, source: String) {
            let all = try await PulseDeviceList(logger: logger).devices()
            guard let sinkName = sink ?? all.first(where: { $0.kind == .sink && $0.isDefault })?.name else {
                throw PulseError.deviceNotFound(kind: .sink, name: "(default)", available: all.map(\.name))
            }
            if let source { return (sinkName, source) }
            let sources = all.filter { $0.kind == .source }
            guard let monitor = sources.first(where: { $0.monitorOfSink == sinkName })?.name else {
                throw PulseError.deviceNotFound(kind: .source, name: "\(sinkName).monitor", available: sources.map(\.name))
            }
            return (sinkName, monitor)
        }

        // MARK: - Turns through files

        /// One session whose microphone is every clip in turn: each next clip starts while the reply to the one
        /// before plays (1.8 s after that reply is due), so every turn is timed and every reply but the last cut.
        static func fileTurns(_ paths: [String], gateway: ReferenceGatewayProcess, folder: String, stt: String) async throws -> TalkBenchReport {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let rate = AudioFrame.sampleRate
            var input = [Int16](repeating: 0, count: 3 * rate)
            for path in paths {
                input += try AudioFileReader.readMono(path: path).samples
                input += [Int16](repeating: 0, count: (silenceMs + 1800) * rate / 1000)
            }
            input += [Int16](repeating: 0, count: 10 * rate)
            let inputPath = folder + "/microphone.wav"
            try WAVAudio(sampleRate: rate, channels: 1, samples: input.map { Float($0) / 32_768 }).encoded()
                .write(to: URL(fileURLWithPath: inputPath))
            let outputPath = folder + "/speaker.wav"
            let seconds = Double(input.count) / Double(rate)
            let child = try await TalkChild(
                ["--gateway", gateway.startup.url, "--token", token, "--input", inputPath, "--output", outputPath, "--json",
                 "--silence-ms", "\(silenceMs)", "--seconds", String(format: "%.1f", seconds), "--stt", stt],
                home: folder)
            // The session ends by itself after --seconds; the bound only catches a hang.
            _ = await child.ends(within: .seconds(Int(seconds) + 120))
            await child.stop()
            guard child.exitStatus == 0 else {
                throw ValidationError("the file session failed (\(child.exitStatus ?? -1)): \(child.stderr.suffix(600))")
            }
            let track = try WAVAudio.read(path: outputPath)
            return TalkBenchReport.turns(events: child.events, track: track.samples, sampleRate: track.sampleRate)
        }
    }
}
