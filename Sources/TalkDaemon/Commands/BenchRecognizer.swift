import AudioIO
import Foundation
import SpeechRecognition
import TalkLogging

extension OpenClawTalk.Bench {
    /// `bench recognizer`: the recogniser alone, without endpointing. Each file is one utterance streamed in
    /// 20 ms frames through one warm decoder; reports decoder start-up time, decode CPU per audio second and
    /// peak memory for the chosen mode, and a rough whole-file WER when a manifest gives transcripts.
    struct Recognizer: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recognizer",
            abstract: "Decode whole WAV files with the recogniser alone: start-up time, real-time factor, memory.",
            discussion: """
                Inputs are 16 kHz WAV files or manifest TSVs (header row; columns 'file' and 'transcript', files
                relative to the manifest). The WER printed is rough (lowercase, punctuation removed); use
                'bench speech' for the scored pipeline.
                """,
            options: [
                .option("grammar", value: "file.gram", help: "Command grammar mode with this JSGF file."),
                .option("keyphrase", value: "text", help: "Wake-phrase mode spotting this phrase."),
                .option("threshold", value: "x", help: "Keyphrase threshold (default 1e-20)."),
                .option("keyword-list", value: "file.kws", help: "Wake-phrase mode with this keyword list."),
                .option("model-dir", value: "dir", help: "Look for the model here first."),
                .option(
                    "decoder-option",
                    value: "name=value",
                    help: "Extra PocketSphinx option without its dash, e.g. lw=7 (repeatable).",
                    repeated: true
                ),
                .flag("library-defaults", help: "Use PocketSphinx's own search settings instead of the tuned ones."),
                .flag("json", help: "Print one JSON object."),
            ],
            arguments: [ArgumentSpec(name: "input", help: "WAV files or manifest TSVs.", repeated: true)]
        )

        var inputs: [String]
        var configuration: RecognizerConfiguration
        var json: Bool

        init(_ parsed: ParsedArguments) throws {
            inputs = parsed.argumentValues("input")
            guard !inputs.isEmpty else { throw ValidationError("Give at least one WAV file or manifest.") }
            let modes = ["grammar", "keyphrase", "keyword-list"].filter { parsed.option($0) != nil }
            guard modes.count <= 1 else {
                throw ValidationError("Choose one of --grammar, --keyphrase and --keyword-list, not \(modes.count).")
            }
            let mode: RecognitionMode
            if let grammar = parsed.option("grammar") {
                mode = .grammar(path: grammar)
            } else if let phrase = parsed.option("keyphrase") {
                mode = .keyphrase(
                    phrase,
                    threshold: try parsed.doubleOption("threshold", range: 1e-100...1e10) ?? 1e-20
                )
            } else if let list = parsed.option("keyword-list") {
                mode = .keywordList(path: list)
            } else {
                mode = .dictation()
            }
            var tuning = parsed.flag("library-defaults") ? DecoderTuning.libraryDefaults : .recommended(for: mode)
            for option in parsed.optionValues("decoder-option") {
                let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty else {
                    throw ValidationError("--decoder-option '\(option)' must look like name=value (e.g. lw=7).")
                }
                tuning.additionalArguments += ["-" + parts[0].drop { $0 == "-" }, parts[1]]
            }
            configuration = RecognizerConfiguration(
                mode: mode,
                modelDirectory: parsed.option("model-dir"),
                tuning: tuning,
                cepstralWarmUpSeconds: parsed.flag("library-defaults") ? 0 : nil
            )
            json = parsed.flag("json")
        }

        func run() async throws {
            let clips = try inputs.flatMap(Clip.load)
            let initStart = ContinuousClock.now
            let recognizer = try PocketSphinxRecognizer(configuration: configuration, logger: Logger(label: "bench"))
            let initSeconds = (ContinuousClock.now - initStart).seconds

            var results: [Clip.Result] = []
            var audioSeconds = 0.0
            let cpuBefore = ProcessUsage.cpuSeconds()
            for clip in clips {
                let samples = try WAVAudio.read(path: clip.path).mixedToMono().samples
                audioSeconds += Double(samples.count) / 16_000
                try await recognizer.startUtterance()
                for start in stride(from: 0, to: samples.count, by: 320) {
                    _ = try await recognizer.process(Array(samples[start..<min(start + 320, samples.count)]))
                }
                let finalStart = ContinuousClock.now
                let hypothesis = try await recognizer.endUtterance()
                results.append(
                    Clip.Result(
                        clip: clip,
                        hypothesis: hypothesis.text,
                        finalizeMs: (ContinuousClock.now - finalStart).seconds * 1000
                    )
                )
            }
            let cpuSeconds = ProcessUsage.cpuSeconds() - cpuBefore
            let summary = Clip.Summary(
                mode: configuration.mode.name,
                files: results,
                initSeconds: initSeconds,
                audioSeconds: audioSeconds,
                cpuSeconds: cpuSeconds,
                peakRSSMB: ProcessUsage.peakRSSMegabytes()
            )
            print(json ? summary.json() : summary.text())
        }
    }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
