/// When the pipeline finishes the decoder's search inside a long utterance. PocketSphinx's final pass
/// (best-path rescoring of the word lattice) grows with the utterance: about 0.2-0.4 s for a 25 s
/// monologue, too slow for a final within 100 ms of the endpoint. Once a segment is `afterMs` long, the
/// next pause of `pauseMs` ends it for the decoder (its cost is paid while the user keeps talking); the
/// texts are joined, so the utterance is still one.
package struct DecoderSegmentation: Sendable, Equatable {
    package var afterMs: Int
    package var pauseMs: Int

    package init(afterMs: Int, pauseMs: Int) {
        self.afterMs = afterMs
        self.pauseMs = pauseMs
    }

    package static let `default` = DecoderSegmentation(afterMs: 8000, pauseMs: 300)

    /// Segments as one hypothesis: texts and words in order, the lowest confidence of those known.
    package static func joined(_ parts: [Hypothesis]) -> Hypothesis {
        if parts.count == 1, let only = parts.first { return only }
        let texts = parts.map(\.text).filter { !$0.isEmpty }
        let confidences = parts.filter { !$0.text.isEmpty }.compactMap(\.confidence)
        return Hypothesis(text: texts.joined(separator: " "), words: parts.flatMap(\.words), confidence: confidences.min())
    }
}
