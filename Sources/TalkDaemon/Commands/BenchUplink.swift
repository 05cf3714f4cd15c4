import AudioIO
import Foundation
import SessionBridge
import SpeechRecognition
import TalkBench
import TalkLogging

extension OpenClawTalk {
    /// `bench uplink`: the relay uplinks (Opus 16 kHz, PCM16 24 kHz, µ-law 8 kHz) over a manifest's clips, measured
    /// by TalkBench's `UplinkBenchmark`.
    struct UplinkBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "uplink",
            abstract: "Measure the relay uplinks: wire bytes per second, CPU per audio second, end of speech to the relay's final.",
            discussion: "Encodes every clip of MANIFEST.tsv in 20 ms frames as each uplink, then streams the first --clips clips in "
                + "real time to the reference Gateway's transcription relay (tools/reference-gateway, python3), which "
                + "returns the manifest transcript of the clip it recognises by its sound.",
            options: BenchReportOptions.options + [
                .option("clips", value: "n", help: "Clips streamed to the relay per uplink for the latency (default 6; 0 skips it)."),
                RepositoryOption.spec,
            ],
            arguments: [ArgumentSpec(name: "manifest", help: "The TSV manifest of 16 kHz clips and transcripts.")]
        )

        /// `--json`, `--report DIR`.
        var reporting: BenchReportOptions
        /// `--clips`: how many clips each uplink streams to the relay for the latency (0: none, wire figures only).
        var clips: Int
        /// `--repository`: where the reference Gateway is.
        var repository: String
        /// The clips and their transcripts.
        var manifest: String

        init(_ parsed: ParsedArguments) throws {
            reporting = BenchReportOptions(parsed)
            clips = try parsed.intOption("clips", range: 0...100) ?? 6
            repository = RepositoryOption.folder(parsed)
            manifest = parsed.argument("manifest") ?? ""
            if manifest.isEmpty { throw ValidationError("'bench uplink' needs MANIFEST.tsv") }
        }

        func run() async throws {
            var logger = Logger(label: "openclaw-talk.bench")
            logger.logLevel = .warning
            let entries = try BenchManifest.load(path: manifest).entries
            let audio = try entries.map { (transcript: $0.transcript, samples: try AudioFileReader.readMono(path: $0.path).samples) }
            var all: [UplinkBenchmark.Figures] = []
            for contract in UplinkBenchmark.contracts {
                var figures = try UplinkBenchmark.measureWire(contract, clips: audio.map(\.samples))
                if clips > 0 {
                    try await UplinkBenchmark.measureLatency(&figures, clips: Array(audio.prefix(clips)), repository: repository, logger: logger)
                }
                all.append(figures)
            }
            let report = UplinkBenchmark.report(all, clips: audio.count, manifest: manifest)
            if !(try await reporting.publish(name: "uplink", json: { report.jsonText })) { UplinkBenchmark.lines(all).forEach { print($0) } }
        }
    }
}
