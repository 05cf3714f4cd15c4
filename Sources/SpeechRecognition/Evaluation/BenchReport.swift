/// The result of `bench speech`, with the JSON field names the benchmark promises.
package struct BenchReport: Sendable, Equatable, Encodable {
    /// One file's outcome.
    package struct FileResult: Sendable, Equatable, Encodable {
        package var file: String
        package var reference: String
        package var hypothesis: String
        /// Word errors (substitutions + deletions + insertions) after normalisation.
        package var errors: Int
        /// The slowest finalisation among the file's utterances; null when none was found.
        package var finalizeMs: Double?
        /// Reference words, after normalisation (the denominator of this file's WER).
        package var words: Int = 0
        /// Word errors of the baseline decoder on the same file (with `--baseline`; the report's plot per clip).
        package var baselineErrors: Int? = nil

        enum CodingKeys: String, CodingKey {
            case file, reference, hypothesis, errors, words
            case finalizeMs = "finalize_ms"
            case baselineErrors = "baseline_errors"
        }

        /// Written by hand because the synthesised encoder leaves nil out; the promised shape keeps
        /// `finalize_ms` (and the report's `baseline`) present as null.
        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(file, forKey: .file)
            try c.encode(reference, forKey: .reference)
            try c.encode(hypothesis, forKey: .hypothesis)
            try c.encode(errors, forKey: .errors)
            try c.encode(finalizeMs, forKey: .finalizeMs)
            try c.encode(words, forKey: .words)
            try c.encodeIfPresent(baselineErrors, forKey: .baselineErrors)
        }
    }

    /// `pocketsphinx_continuous` on the same files and model.
    package struct Baseline: Sendable, Equatable, Encodable {
        package var engine: String
        package var wer: Double
        package var wallSeconds: Double

        enum CodingKeys: String, CodingKey {
            case engine, wer
            case wallSeconds = "wall_seconds"
        }
    }

    package var utterances: Int
    /// Reference words, after normalisation.
    package var words: Int
    package var wer: Double
    /// Decode CPU seconds over audio seconds.
    package var rtf: Double
    package var finalizeMs: LatencySummary
    package var endToFinalMs: LatencySummary
    /// All CPU time of this process, model loading included.
    package var cpuSeconds: Double
    package var peakRSSMegabytes: Double
    package var files: [FileResult]
    package var baseline: Baseline?

    enum CodingKeys: String, CodingKey {
        case utterances, words, wer, rtf, files, baseline
        case finalizeMs = "finalize_ms"
        case endToFinalMs = "end_to_final_ms"
        case cpuSeconds = "cpu_seconds"
        case peakRSSMegabytes = "peak_rss_mb"
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(utterances, forKey: .utterances)
        try c.encode(words, forKey: .words)
        try c.encode(wer, forKey: .wer)
        try c.encode(rtf, forKey: .rtf)
        try c.encode(finalizeMs, forKey: .finalizeMs)
        try c.encode(endToFinalMs, forKey: .endToFinalMs)
        try c.encode(cpuSeconds, forKey: .cpuSeconds)
        try c.encode(peakRSSMegabytes, forKey: .peakRSSMegabytes)
        try c.encode(files, forKey: .files)
        try c.encode(baseline, forKey: .baseline)
    }
}
