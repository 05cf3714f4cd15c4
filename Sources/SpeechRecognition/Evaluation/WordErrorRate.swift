/// Word errors between a reference and a hypothesis: the fewest substitutions, deletions and insertions
/// (Levenshtein distance over words) that turn one into the other.
package struct WordErrors: Sendable, Equatable {
    package var substitutions = 0
    package var deletions = 0
    package var insertions = 0
    package var referenceWords = 0

    package init(substitutions: Int = 0, deletions: Int = 0, insertions: Int = 0, referenceWords: Int = 0) {
        self.substitutions = substitutions
        self.deletions = deletions
        self.insertions = insertions
        self.referenceWords = referenceWords
    }

    package var errors: Int { substitutions + deletions + insertions }

    /// Errors over reference words. With no reference words it is 0 for an empty hypothesis and 1 otherwise.
    package var rate: Double {
        referenceWords > 0 ? Double(errors) / Double(referenceWords) : (errors == 0 ? 0 : 1)
    }

    /// Sums tallies over a set, as the corpus WER is defined (not an average of per-file rates).
    package static func + (a: WordErrors, b: WordErrors) -> WordErrors {
        WordErrors(substitutions: a.substitutions + b.substitutions, deletions: a.deletions + b.deletions,
                   insertions: a.insertions + b.insertions, referenceWords: a.referenceWords + b.referenceWords)
    }

    /// Aligns two word sequences; among alignments with the fewest errors, substitutions are preferred.
    package static func between(reference ref: [String], hypothesis hyp: [String]) -> WordErrors {
        // cost[i][j]: (errors, subs, dels, ins) turning ref[..<i] into hyp[..<j].
        typealias Cell = (e: Int, s: Int, d: Int, i: Int)
        var prev: [Cell] = (0...hyp.count).map { (e: $0, s: 0, d: 0, i: $0) }
        for i in stride(from: 1, through: ref.count, by: 1) {
            var row: [Cell] = [(e: i, s: 0, d: i, i: 0)]
            for j in stride(from: 1, through: hyp.count, by: 1) {
                let same = ref[i - 1] == hyp[j - 1]
                var best = prev[j - 1]
                if !same { best = (best.e + 1, best.s + 1, best.d, best.i) }
                let del = prev[j], ins = row[j - 1]
                if del.e + 1 < best.e { best = (del.e + 1, del.s, del.d + 1, del.i) }
                if ins.e + 1 < best.e { best = (ins.e + 1, ins.s, ins.d, ins.i + 1) }
                row.append(best)
            }
            prev = row
        }
        let last = prev[hyp.count]
        return WordErrors(substitutions: last.s, deletions: last.d, insertions: last.i, referenceWords: ref.count)
    }

    /// Normalises both texts (corpus rules) and aligns them.
    package static func between(reference: String, hypothesis: String) -> WordErrors {
        between(reference: TranscriptNormalizer.words(reference), hypothesis: TranscriptNormalizer.words(hypothesis))
    }
}
