/// How far synthesis runs ahead of playback, as the Talk loop speaks a reply and `say` speaks text: each sentence
/// is synthesised while the ones before it play, at most `ahead` in front of the one playing. A long reply is not
/// all asked of a remote voice (each request billed, each clip decoded on a thread of its own) or made into PCM at
/// once, and a reply cut off after its first sentence has not asked for the rest. Two: the next sentence is ready
/// when one ends, with one more in case that one is short. A value with no I/O: the owner starts the synthesis of
/// the sentences it is given and says when the speaker has taken one.
package struct SentenceLookahead<Sentence: Sendable>: Sendable {
    package static var ahead: Int { 2 }

    private var held: [Sentence] = []
    /// Sentences given out for synthesis, and those the speaker has taken (played or skipped) since.
    private var released = 0
    private var taken = 0
    /// No more sentences will come.
    private var complete = false

    package init() {}

    /// Holds `sentences` behind the ones before; returns those whose synthesis starts now, in order.
    package mutating func hold(_ sentences: [Sentence]) -> [Sentence] {
        held += sentences
        return release()
    }

    /// The speaker took a sentence (its audio was ready, or failed): returns those whose synthesis starts now.
    package mutating func took() -> [Sentence] {
        taken += 1
        return release()
    }

    /// No more sentences will come (the reply is complete).
    package mutating func finish() { complete = true }

    /// Complete, and every sentence given out: the speaker's queue ends after the ones it has.
    package var drained: Bool { complete && held.isEmpty }

    private mutating func release() -> [Sentence] {
        let count = max(0, min(held.count, Self.ahead - (released - taken)))
        let now = Array(held.prefix(count))
        held.removeFirst(count)
        released += count
        return now
    }
}
