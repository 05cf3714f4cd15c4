import Testing

@testable import SpeechSynthesis

/// Synthesis runs at most two sentences ahead of the one playing, for the Talk loop and `say` alike.
@Suite struct SentenceLookaheadTests {
    @Test func `two sentences are synthesised ahead, and one more each time the speaker takes one`() {
        var lookahead = SentenceLookahead<String>()
        #expect(lookahead.hold(["a", "b", "c"]) == ["a", "b"])
        #expect(lookahead.hold(["d"]) == [])
        #expect(lookahead.took() == ["c"])
        #expect(lookahead.took() == ["d"])
        #expect(lookahead.took() == [])
        #expect(lookahead.hold(["e", "f"]) == ["e"], "one still waits to be taken: one more may start")
        #expect(!lookahead.drained)
        lookahead.finish()
        #expect(!lookahead.drained, "f is still held")
        #expect(lookahead.took() == ["f"])
        #expect(lookahead.drained)
    }

    @Test func `a reply that is complete before its sentences are released drains only once they are`() {
        var lookahead = SentenceLookahead<Int>()
        lookahead.finish()
        #expect(lookahead.drained)
        #expect(lookahead.hold([1, 2, 3]) == [1, 2])
        #expect(!lookahead.drained)
        #expect(lookahead.took() == [3])
        #expect(lookahead.drained)
    }
}
