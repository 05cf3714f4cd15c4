import TalkTestSupport
import Testing

@testable import SpeechSynthesis

/// Streamed replies become sentences as soon as each is complete: in order, each once, none longer than the soft
/// limit unless a single word is.
@Suite struct SentenceSegmenterTests {
    /// Feeds `text` in deltas of `size` characters; returns every piece with the delta count at which it came out.
    private func stream(_ text: String, size: Int, softLimit: Int = 72) -> [(piece: String, at: Int)] {
        var segmenter = SentenceSegmenter(softLimit: softLimit)
        var out: [(String, Int)] = []
        var rest = Substring(text)
        var count = 0
        while !rest.isEmpty {
            count += 1
            out += segmenter.append(String(rest.prefix(size))).map { ($0, count) }
            rest = rest.dropFirst(size)
        }
        out += segmenter.finish().map { ($0, count + 1) }
        return out
    }

    static let reply = "Hello there! Dr. Smith measured 3.5 kg today. Is that right? "
        + "The list follows:\n- apples\n- pears\n\nThat is e.g. enough… Bye."

    @Test(arguments: [1, 2, 3, 7, 500])
    func `deltas of any size give the same sentences in order`(size: Int) {
        let pieces = stream(Self.reply, size: size).map(\.piece)
        #expect(pieces == [
            "Hello there!", "Dr. Smith measured 3.5 kg today.", "Is that right?", "The list follows:", "apples",
            "pears", "That is e.g. enough…", "Bye.",
        ])
    }

    @Test func `a sentence comes out as soon as it is complete, not at the end`() {
        let pieces = stream("First one is done. Second one takes a while to arrive", size: 4)
        #expect(pieces.first?.piece == "First one is done.")
        // "First one is done. " is complete after its 5th delta (20 characters).
        #expect(pieces.first?.at == 5)
        #expect(pieces.last?.piece == "Second one takes a while to arrive")
    }

    @Test func `a number is not cut at its decimal point while it streams`() {
        var segmenter = SentenceSegmenter()
        #expect(segmenter.append("It costs 3.") == [])
        #expect(segmenter.append("5 euros. ") == ["It costs 3.5 euros."])
    }

    @Test func `a long sentence is cut at a clause boundary within the soft limit`() {
        let long = "When the build finishes on the second core, which can take a while on this machine, "
            + "run the tests again and read the report that they write out at the very end."
        let pieces = stream(long, size: 5).map(\.piece)
        #expect(pieces.count > 1)
        #expect(pieces.allSatisfy { $0.count <= 72 }, "\(pieces)")
        #expect(pieces.first == "When the build finishes on the second core,")
        #expect(pieces.joined(separator: " ") == long.trimmingCharacters(in: .whitespaces))
    }

    @Test func `without clause marks the cut is at a word boundary`() {
        let words = (1...40).map { "word\($0)" }.joined(separator: " ")
        let pieces = stream(words, size: 3).map(\.piece)
        #expect(pieces.count >= 4)  // 270 characters
        #expect(pieces.allSatisfy { $0.count <= 72 && !$0.hasPrefix(" ") })
        #expect(pieces.joined(separator: " ") == words)
    }

    @Test func `a word longer than the limit is cut after it, never inside it`() {
        let word = String(repeating: "x", count: 100)
        let pieces = stream("\(word) tail words here.", size: 10).map(\.piece)
        #expect(pieces == [word, "tail words here."])
    }

    @Test func `finish flushes the unfinished rest once; nothing comes after it`() {
        var segmenter = SentenceSegmenter()
        #expect(segmenter.append("One. Two without end") == ["One."])
        #expect(segmenter.finish() == ["Two without end"])
        #expect(segmenter.finish() == [])
        #expect(segmenter.append(" More. And more. ") == [])
        #expect(segmenter.replace(with: "One. Two without end. Three. ") == [])
    }

    @Test func `replace snapshots that extend the reply never repeat a sentence`() {
        var segmenter = SentenceSegmenter()
        var pieces: [String] = []
        for snapshot in ["Good morning. It is", "Good morning. It is sunny. Take", "Good morning. It is sunny. Take a hat."] {
            pieces += segmenter.replace(with: snapshot)
        }
        pieces += segmenter.finish()
        #expect(pieces == ["Good morning.", "It is sunny.", "Take a hat."])
    }

    @Test func `a snapshot that rewrites what was said goes on from the same place`() {
        var segmenter = SentenceSegmenter()
        #expect(segmenter.append("Good morning. The weather ") == ["Good morning."])
        // The Gateway rewrote the first sentence; it was already said and is not said again.
        let after = segmenter.replace(with: "Good evening. The weather is fine. ")
        #expect(after == ["The weather is fine."])
        #expect(segmenter.finish() == [])
    }

    @Test func `mixed deltas and snapshots through SpokenReply say each sentence once`() {
        var reply = SpokenReply()
        var pieces = reply.append("Alpha. Be")
        pieces += reply.replace(with: "Alpha. Beta. Gam")
        pieces += reply.append("ma. ")
        pieces += reply.replace(with: "Alpha. Beta. Gamma. Delta")
        pieces += reply.finish()
        #expect(pieces == ["Alpha.", "Beta.", "Gamma.", "Delta"])
    }

    @Test func `initials and titles stay inside their sentence`() {
        let (_, pieces) = SpokenReply.sentences(of: "I met J. R. Tolkien and Mrs. Brown at St. Mary's. They waved.")
        #expect(pieces == ["I met J. R. Tolkien and Mrs. Brown at St. Mary's.", "They waved."])
    }

    @Test func `a period inside inline code or a link does not end the sentence`() {
        let (_, pieces) = SpokenReply.sentences(of: "Open `a. b` and [see. this](https://x.org/a. b) now. Done.")
        #expect(pieces == ["Open a b and see. this now.", "Done."])
    }

    @Test func `hostile input streamed in tiny deltas gives bounded pieces`() async throws {
        // A long unbroken "word" and a long code block, fed in tiny deltas: no piece grows past the hard limit
        // (so no delta rescans more than that), and the block is still said once. CPU work: off the pool.
        let pieces = try await offPool {
            var segmenter = SentenceSegmenter()
            var pieces: [String] = []
            for _ in 0..<5_000 { pieces += segmenter.append("x") }
            pieces += segmenter.append(" ok.\n```\n")
            for _ in 0..<2_000 { pieces += segmenter.append("code line\n") }
            pieces += segmenter.append("```\nEnd. ")
            return pieces
        }
        let long = pieces.filter { $0.hasPrefix("x") }
        #expect(long.count >= 5_000 / SentenceSegmenter.hardLimit)
        #expect(long.allSatisfy { $0.count <= SentenceSegmenter.hardLimit }, "\(long.map(\.count))")
        #expect(pieces.suffix(3) == ["ok.", "code omitted", "End."])
    }
}
