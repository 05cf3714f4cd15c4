import Testing

@testable import SpeechRecognition

@Suite struct NormalisationTests {
    @Test(arguments: [
        ("Go Forward TEN meters", "go forward ten meters"),
        ("[noise] hello <sil> there [laughter]", "hello there"),
        ("<s> go home </s>", "go home"),
        ("apples, pears, etc.", "apples pears et cetera"),
        ("yknow it works", "you know it works"),
        ("a well-known co-op", "a well known co op"),
        ("yes/no and either\u{2014}or, this \u{2013} that", "yes no and either or this that"),
        ("I'm sure you've seen it; don't!", "i'm sure you've seen it don't"),
        ("'quoted' words' end", "quoted words end"),
        ("it\u{2019}s fine", "it's fine"),
        ("uh so um I uhm hm hmm mm mhm er ah eh think", "so i think"),
        ("Mr. Smith said: \"stop?\"", "mr smith said stop"),
        ("ten, twentieth, oh", "ten twentieth oh"),
        ("", ""),
        ("  ...  ", ""),
    ])
    func `transcripts are normalised by the corpus rules`(input: String, expected: String) {
        #expect(TranscriptNormalizer.normalize(input) == expected)
    }

    @Test(arguments: [
        ("go forward ten meters", "go forward ten meters", 0, 0, 0),
        ("go forward ten meters", "go forward two meters", 1, 0, 0),
        ("go forward ten meters", "go ten meters", 0, 1, 0),
        ("go forward ten meters", "so go forward ten meters now", 0, 0, 2),
        ("ten of clubs", "", 0, 3, 0),
        ("", "hello", 0, 0, 1),
        ("a b c d", "b c d e", 0, 1, 1),
    ])
    func `word errors count substitutions, deletions and insertions`(reference: String, hypothesis: String, s: Int, d: Int, i: Int) {
        let e = WordErrors.between(reference: reference, hypothesis: hypothesis)
        #expect(e.substitutions == s)
        #expect(e.deletions == d)
        #expect(e.insertions == i)
    }

    @Test func `hypotheses are normalised before scoring, so case and fillers cost nothing`() {
        let e = WordErrors.between(reference: "Turn on the living-room lamp.", hypothesis: "uh turn on the living room lamp")
        #expect(e.errors == 0)
        #expect(e.referenceWords == 6)
    }

    @Test func `the set's WER sums errors and reference words rather than averaging per file`() {
        let a = WordErrors.between(reference: "one two three four", hypothesis: "one two three four")  // 0 / 4
        let b = WordErrors.between(reference: "five", hypothesis: "six")  // 1 / 1
        #expect((a + b).rate == 1.0 / 5.0)
        #expect(WordErrors().rate == 0)
    }

    @Test func `latency percentiles use nearest rank`() {
        let s = LatencySummary((1...20).map(Double.init))
        #expect(s.p50 == 10)
        #expect(s.p95 == 19)
        #expect(s.max == 20)
        #expect(LatencySummary([]) == LatencySummary(p50: 0, p95: 0, max: 0))
    }
}
