import Foundation

extension OpenClawTalk.Bench.Recognizer {
    /// One audio file for `bench recognizer`, with its reference transcript when a manifest gives one.
    struct Clip: Sendable {
        var path: String
        var reference: String?

        /// A WAV file as one clip, or every row of a manifest TSV (header row with `file` and `transcript`).
        static func load(_ input: String) throws -> [Clip] {
            guard input.hasSuffix(".tsv") else { return [Clip(path: input, reference: nil)] }
            guard let text = try? String(contentsOfFile: input, encoding: .utf8) else {
                throw ValidationError("Cannot read manifest \(input).")
            }
            let rows = text.split(whereSeparator: \.isNewline).map { $0.split(separator: "\t").map(String.init) }
            guard let header = rows.first, let fileColumn = header.firstIndex(of: "file") else {
                throw ValidationError("Manifest \(input) needs a header row with a 'file' column.")
            }
            let transcriptColumn = header.firstIndex(of: "transcript")
            let folder = (input as NSString).deletingLastPathComponent
            return try rows.dropFirst().enumerated().map { index, row in
                guard row.count > fileColumn else {
                    throw ValidationError("Manifest \(input) row \(index + 2) has no 'file' value.")
                }
                let reference = transcriptColumn.flatMap { $0 < row.count ? row[$0] : nil }
                return Clip(path: (folder as NSString).appendingPathComponent(row[fileColumn]), reference: reference)
            }
        }

        struct Result: Sendable {
            var clip: Clip
            var hypothesis: String
            var finalizeMs: Double
        }

        /// Totals of one `bench recognizer` run.
        struct Summary: Sendable {
            var mode: String
            var files: [Result]
            var initSeconds: Double
            var audioSeconds: Double
            var cpuSeconds: Double
            var peakRSSMB: Double

            var rtf: Double { audioSeconds > 0 ? cpuSeconds / audioSeconds : 0 }

            /// Time from the end of the audio to the final hypothesis: p50, p95 and max, in ms.
            var finalizeMs: (p50: Double, p95: Double, max: Double) {
                let sorted = files.map(\.finalizeMs).sorted()
                guard let last = sorted.last else { return (0, 0, 0) }
                func rank(_ p: Double) -> Double {
                    sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
                }
                return (rank(0.5), rank(0.95), last)
            }

            /// Word errors and reference words over the files that have a reference.
            var errors: (errors: Int, words: Int)? {
                let scored = files.compactMap { result in
                    result.clip.reference.map { (roughWords($0), roughWords(result.hypothesis)) }
                }
                guard !scored.isEmpty else { return nil }
                return scored.reduce((0, 0)) { total, pair in
                    (total.0 + editDistance(pair.0, pair.1), total.1 + pair.0.count)
                }
            }

            func text() -> String {
                var lines = files.map { "\(($0.clip.path as NSString).lastPathComponent)\t\($0.hypothesis)" }
                lines.append(
                    String(
                        format: "mode %@: init %.3f s, audio %.1f s, decode cpu %.2f s, rtf %.3f, peak RSS %.0f MB",
                        mode,
                        initSeconds,
                        audioSeconds,
                        cpuSeconds,
                        rtf,
                        peakRSSMB
                    )
                )
                let finalize = finalizeMs
                lines.append(
                    String(
                        format: "finalize ms: p50 %.1f, p95 %.1f, max %.1f",
                        finalize.p50,
                        finalize.p95,
                        finalize.max
                    )
                )
                if let (errors, words) = errors {
                    lines.append(
                        String(
                            format: "rough WER %.1f %% (%d/%d)",
                            100 * Double(errors) / Double(max(words, 1)),
                            errors,
                            words
                        )
                    )
                }
                return lines.joined(separator: "\n")
            }

            func json() -> String {
                var object: [String: Any] = [
                    "mode": mode, "init_seconds": initSeconds, "audio_seconds": audioSeconds, "cpu_seconds": cpuSeconds,
                    "rtf": rtf, "peak_rss_mb": peakRSSMB,
                    "finalize_ms": ["p50": finalizeMs.p50, "p95": finalizeMs.p95, "max": finalizeMs.max],
                    "files": files.map { result -> [String: Any] in
                        var file: [String: Any] = [
                            "file": result.clip.path, "hypothesis": result.hypothesis, "finalize_ms": result.finalizeMs,
                        ]
                        if let reference = result.clip.reference { file["reference"] = reference }
                        return file
                    },
                ]
                if let (errors, words) = errors {
                    object["rough_wer"] = Double(errors) / Double(max(words, 1))
                    object["words"] = words
                }
                let data =
                    (try? JSONSerialization.data(
                        withJSONObject: object,
                        options: [.sortedKeys, .withoutEscapingSlashes]
                    )) ?? Data()
                return String(decoding: data, as: UTF8.self)
            }
        }

        /// Lowercase words with punctuation removed (apostrophes kept): a rough normalisation for a quick WER.
        static func roughWords(_ text: String) -> [String] {
            String(text.lowercased().map { $0.isLetter || $0.isNumber || $0 == "'" ? $0 : " " })
                .split(separator: " ").map(String.init)
        }

        /// Word-level Levenshtein distance: substitutions + deletions + insertions.
        static func editDistance(_ a: [String], _ b: [String]) -> Int {
            var row = Array(0...b.count)
            for (i, wordA) in a.enumerated() {
                var diagonal = row[0]
                row[0] = i + 1
                for (j, wordB) in b.enumerated() {
                    let substitution = diagonal + (wordA == wordB ? 0 : 1)
                    diagonal = row[j + 1]
                    row[j + 1] = min(row[j + 1] + 1, row[j] + 1, substitution)
                }
            }
            return row[b.count]
        }
    }

    /// CPU time and peak memory of this process, for benchmarks.
    enum ProcessUsage {
        /// User plus system CPU seconds used so far.
        static func cpuSeconds() -> Double {
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
            return seconds(usage.ru_utime) + seconds(usage.ru_stime)
        }

        /// Peak resident set size (VmHWM in /proc/self/status), in MB.
        static func peakRSSMegabytes() -> Double {
            guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
            else { return 0 }
            return kilobytes / 1024
        }
    }
}
