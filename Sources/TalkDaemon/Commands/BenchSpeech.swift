import AudioIO
import Foundation
import SpeechRecognition
import TalkLogging

extension OpenClawTalk.Bench {
    /// `bench speech MANIFEST.tsv` (the default of `bench`): accuracy and latency of the capture pipeline.
    struct Speech: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "speech",
            abstract: "Recognise every clip of a manifest and report WER, real-time factor and latency.",
            discussion: """
                MANIFEST.tsv has a header row with the columns 'file' (relative to the manifest's folder) and \
                'transcript'; other columns are ignored. Each clip goes through the live pipeline (file input, \
                endpointer, recogniser): as fast as possible, or paced as a microphone with --realtime.
                """,
            options: BenchReportOptions.options + [
                .flag("realtime", help: "Feed each file at the pace of a live microphone."),
                .flag("baseline", help: "Also run pocketsphinx_continuous with the same model on every file."),
                .option(
                    "aec-stages", value: "list",
                    help: "Run the audio through WebRTC audio processing first: aec (echo cancellation alone), "
                        + "or aec with any of hp (high-pass filter), ns (moderate noise suppression), agc (gain control), "
                        + "comma-separated, e.g. aec,hp,ns."),
                RecognizerOptions.grammar, RecognizerOptions.modelDirectory,
            ],
            arguments: [ArgumentSpec(name: "manifest", help: "The TSV manifest of clips and transcripts.")]
        )

        var manifest: String
        /// `--json`, `--report DIR`.
        var reporting: BenchReportOptions
        var realTime: Bool
        var baseline: Bool
        var recognizer: RecognizerOptions
        var audioProcessing: EchoCancellerOptions?

        init(_ parsed: ParsedArguments) throws {
            manifest = parsed.argument("manifest") ?? ""
            reporting = BenchReportOptions(parsed)
            realTime = parsed.flag("realtime")
            baseline = parsed.flag("baseline")
            recognizer = try RecognizerOptions(parsed)
            audioProcessing = try parsed.option("aec-stages").map(Self.stages)
        }

        /// `aec[,hp][,ns][,agc]` as canceller options.
        static func stages(_ list: String) throws -> EchoCancellerOptions {
            let names = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            let known: Set = ["aec", "hp", "ns", "agc"]
            guard names.contains("aec"), names.allSatisfy(known.contains) else {
                throw ValidationError("Invalid value '\(list.prefix(100))' for '--aec-stages': expected aec, optionally with hp, ns, agc (comma-separated)")
            }
            return EchoCancellerOptions(
                highPassFilter: names.contains("hp"), noiseSuppression: names.contains("ns") ? .moderate : nil,
                gainControl: names.contains("agc"))
        }

        func run() async throws {
            let logger = Logger(label: "openclaw-talk.bench")
            let clips = try BenchManifest.load(path: manifest)
            let engine = try PocketSphinxRecognizer(configuration: recognizer.configuration, logger: logger)
            var grammar: String?
            if case .grammar(let path) = recognizer.configuration.mode { grammar = path }
            let reference = baseline ? try BaselineDecoder(models: engine.models, grammar: grammar) : nil
            let benchmark = SpeechBenchmark(
                manifest: clips, transcriber: FileTranscriber(
                    recognizer: engine, realTime: realTime, audioProcessing: audioProcessing, logger: logger),
                baseline: reference)
            let report = try await benchmark.run()
            let printed = try await reporting.publish(name: grammar == nil ? "speech" : "speech-grammar") {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes]
                return String(decoding: try encoder.encode(report), as: UTF8.self)
            }
            if !printed { print(Self.table(report)) }
        }

        static func table(_ r: BenchReport) -> String {
            var lines = r.files.map { f in
                let finalize = f.finalizeMs.map { String(format: "%6.1f ms", $0) } ?? "     - ms"
                return String(format: "%3d err  ", f.errors) + finalize + "  \(f.file)\n      ref: \(f.reference)\n      hyp: \(f.hypothesis)"
            }
            lines.append("")
            lines.append("files \(r.files.count), utterances \(r.utterances), reference words \(r.words)")
            lines.append(String(format: "WER %.1f %%   rtf %.3f   cpu %.2f s   peak RSS %.1f MB", r.wer * 100, r.rtf, r.cpuSeconds, r.peakRSSMegabytes))
            lines.append(String(format: "finalize_ms     p50 %.1f  p95 %.1f  max %.1f", r.finalizeMs.p50, r.finalizeMs.p95, r.finalizeMs.max))
            lines.append(String(format: "end_to_final_ms p50 %.1f  p95 %.1f  max %.1f", r.endToFinalMs.p50, r.endToFinalMs.p95, r.endToFinalMs.max))
            if let b = r.baseline {
                lines.append(String(format: "baseline %@: WER %.1f %%, wall %.2f s", b.engine, b.wer * 100, b.wallSeconds))
            }
            return lines.joined(separator: "\n")
        }
    }
}
