import Foundation
import TalkLogging

/// Runs every clip of a manifest through the capture-side pipeline with one warm recogniser, scores the
/// hypotheses against the references (corpus normalisation, WER summed over the set), and optionally runs
/// the baseline decoder on the same files afterwards, so it does not disturb our timings.
package struct SpeechBenchmark: Sendable {
    package var manifest: BenchManifest
    package var transcriber: FileTranscriber
    package var baseline: BaselineDecoder?
    /// Told about each file as it is done (for a progress line on stderr).
    package var progress: (@Sendable (String) -> Void)?

    package init(manifest: BenchManifest, transcriber: FileTranscriber, baseline: BaselineDecoder? = nil,
                 progress: (@Sendable (String) -> Void)? = nil) {
        self.manifest = manifest
        self.transcriber = transcriber
        self.baseline = baseline
        self.progress = progress
    }

    package func run() async throws -> BenchReport {
        var files: [BenchReport.FileResult] = []
        var tally = WordErrors()
        var finalize: [Double] = []
        var endToFinal: [Double] = []
        var utterances = 0
        var decodeCPU = 0.0
        var audioSeconds = 0.0
        for entry in manifest.entries {
            let result = try await transcriber.transcribe(path: entry.path)
            let errors = WordErrors.between(reference: entry.transcript, hypothesis: result.text)
            tally = tally + errors
            utterances += result.utterances.count
            finalize += result.utterances.map(\.finalizeMs)
            endToFinal += result.utterances.map(\.endToFinalMs)
            decodeCPU += result.summary.decodeCPUSeconds
            audioSeconds += result.audioSeconds
            files.append(BenchReport.FileResult(
                file: entry.file, reference: entry.transcript, hypothesis: result.text, errors: errors.errors,
                finalizeMs: result.utterances.map(\.finalizeMs).max(), words: errors.referenceWords))
            progress?("\(entry.file): \(errors.errors) error(s)")
        }
        let usage = ResourceUsage.current()
        var report = BenchReport(
            utterances: utterances, words: tally.referenceWords, wer: tally.rate,
            rtf: audioSeconds > 0 ? decodeCPU / audioSeconds : 0, finalizeMs: LatencySummary(finalize),
            endToFinalMs: LatencySummary(endToFinal), cpuSeconds: usage.cpuSeconds,
            peakRSSMegabytes: usage.peakRSSMegabytes, files: files, baseline: nil)
        if let baseline {
            var baseTally = WordErrors()
            var wall = 0.0
            for (index, entry) in manifest.entries.enumerated() {
                let (text, seconds) = try await baseline.transcribe(entry.path)
                let errors = WordErrors.between(reference: entry.transcript, hypothesis: text)
                baseTally = baseTally + errors
                report.files[index].baselineErrors = errors.errors
                wall += seconds
                progress?("baseline \(entry.file)")
            }
            report.baseline = .init(engine: BaselineDecoder.engineName, wer: baseTally.rate, wallSeconds: wall)
        }
        return report
    }
}
