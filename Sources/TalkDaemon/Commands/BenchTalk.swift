import AudioIO
import Foundation
import SessionBridge
import SpeechRecognition
import TalkBench
import TalkLogging

extension OpenClawTalk.Bench {
    /// `bench talk`: the Talk loop's own latencies, end to end through `openclaw-talk run` with the reference
    /// Gateway answering at once; TalkBench's `TalkLoopBenchmark` runs the sessions and `TalkBenchReport` makes
    /// the figures.
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
                .option("mode", value: "talk|realtime", help: "How the live sessions run (default talk; realtime: run --mode realtime on the reference Gateway's realtime relay)."),
                .option("voice", value: "local|gateway", help: "Whose voice speaks the live replies (default local: a Gateway without a Talk provider)."),
                .option("reply-seconds", value: "n", help: "A live reply about this long (default: one of about 6 s)."),
                .option("rate", value: "wpm", help: "The local voice's speed in the live sessions, 80-450 words per minute (default 175; not with --voice gateway or --mode realtime)."),
                .option("user-gain-db", value: "dB", help: "The user's level over the reply in the barge-in sessions, -40 to 12 dB against the clip as recorded (default 0; a user a metre from loud speakers: -6 to -12)."),
                .option("user-at-seconds", value: "s", help: "Every barge-in session's user starts this far into the reply (default: trial k at 1 + 0.35k s, over the reply's first 8 s and within it; 1.5 was the fixed start before)."),
                .option("grammar", value: "file.gram", help: "The live sessions recognise only this JSGF grammar's sentences (default: dictation); the barge-in clips are then heard as its sentences."),
                .option("live-stt", value: "relay|local", help: "Whose words the live sessions send, and the barge-in trials judge (default relay: run's default, the reference Gateway's transcription relay, judged from the audio sent to it; local: run --stt local, judged from the transcript sent)."),
                SoundServerOption.spec(help: "Check that the sound server answering is this one (run under scripts/with-pulse.sh or with-pipewire.sh)."),
                .option("record", value: "dir", help: "Record each live session's echo cancellation to dir/<session>, for bench aec --replay."),
                .option("rejudge", value: "dir", help: "Run nothing: judge again the barge-in trials of a folder kept with OPENCLAW_TALK_BENCH_KEEP=1 (with --grammar for a grammar row kept before its trials' records; --json)."),
            ] + AudioDeviceOptions.options(.devices, help: .loopback) + [
                RepositoryOption.spec,
                .option("stt", value: "local|auto|gateway", help: "Whose words the file session sends (default local: this client's own figures)."),
            ]
        )

        /// `--json`, `--report DIR`.
        var reporting: BenchReportOptions
        var manifest: String
        var clipLimit: Int?
        var trials: Int
        var offTrials: Int
        var bargeInTrials: Int
        var conditions: TalkBenchConditions
        var record: String?
        /// `--rejudge DIR`: a kept row's barge-in trials judged again (`KeptBargeInRow`), nothing run.
        var rejudge: String?
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
            rejudge = parsed.option("rejudge")
            if rejudge != nil, reporting.folder != nil { throw ValidationError("'--rejudge' prints its figures; '--report' goes with a bench run") }
            devices = try AudioDeviceOptions(parsed, .devices)
            repository = RepositoryOption.folder(parsed)
            stt = parsed.option("stt") ?? "local"
            guard ["local", "auto", "gateway"].contains(stt) else {
                throw ValidationError("Invalid value '\(stt)' for '--stt': expected local, gateway or auto")
            }
        }

        func run() async throws {
            if let rejudge {
                let judged = try await KeptBargeInRow.rejudge(folder: rejudge, grammar: conditions.grammar)
                print(reporting.json ? judged.figures.json.jsonText : judged.text)
                return
            }
            var clips = try BenchManifest.load(path: manifest).entries
            if let clipLimit { clips = Array(clips.prefix(clipLimit)) }
            var plan = TalkLoopBenchmark.Plan(
                clips: clips.map(\.path), trials: trials, offTrials: offTrials, bargeInTrials: bargeInTrials, conditions: conditions,
                record: record, sink: devices.sink, source: devices.source, repository: repository, stt: stt)
            // OPENCLAW_TALK_BENCH_KEEP keeps the sessions' folders (events, logs) for a look afterwards.
            plan.keepSessions = ProcessInfo.processInfo.environment["OPENCLAW_TALK_BENCH_KEEP"] != nil
            // OPENCLAW_TALK_BENCH_RUN=<openclaw-talk>: the sessions run that build (a before binary judged by this bench).
            plan.runBinary = ProcessInfo.processInfo.environment["OPENCLAW_TALK_BENCH_RUN"]
            let report = try await TalkLoopBenchmark.run(plan)
            if !(try await reporting.publish(name: "talk", json: { report.json.jsonText })) { print(report.text) }
        }
    }
}
