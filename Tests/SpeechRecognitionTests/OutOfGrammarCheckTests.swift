import Testing

@testable import SpeechRecognition

/// `OutOfGrammarCheck` on best paths made by hand: the grammar's path against the phone loop's over the same frames.
@Suite struct OutOfGrammarCheckTests {
    typealias Segment = OutOfGrammarCheck.Segment
    let check = OutOfGrammarCheck()
    /// 100 frames: silence, then what the phone loop made of 50 frames of speech, then silence.
    let phoneLoop = [Segment("SIL", 0, 24, -250), Segment("D", 25, 49, -500), Segment("AY", 50, 74, -500), Segment("SIL", 75, 99, -250)]

    @Test func `a word that fits as well as the phone loop stands`() throws {
        let grammar = [Segment("<sil>", 0, 24, -260), Segment("deny", 25, 74, -1100), Segment("<sil>", 75, 99, -260)]
        let scores = try #require(check.scores(grammar: grammar, phoneLoop: phoneLoop))
        #expect(abs(scores.path - -1.2) < 1e-9 && abs(scores.words - -2) < 1e-9, "\(scores)")
        #expect(check.accepts(scores))
    }

    @Test func `speech the grammar can only call silence and a wrong word is out of grammar`() throws {
        // 100 frames of speech: the phone loop fits them; the grammar's silences and word fit far worse.
        let loop = (0..<10).map { Segment("AH", $0 * 10, $0 * 10 + 9, -200) }
        let grammar = [Segment("<sil>", 0, 69, -4800), Segment("repeat", 70, 99, -1200)]
        let scores = try #require(check.scores(grammar: grammar, phoneLoop: loop))
        #expect(scores.path < check.minimumPathScorePerFrame, "\(scores)")
        #expect(!check.accepts(scores))
    }

    @Test func `noise heard as silence and a few frames of a word is out of grammar`() throws {
        let loop = [Segment("SIL", 0, 30, -700), Segment("S", 31, 99, -1900)]
        let grammar = [Segment("<sil>", 0, 93, -800), Segment("no", 94, 99, -600)]
        let scores = try #require(check.scores(grammar: grammar, phoneLoop: loop))
        #expect(scores.path >= check.minimumPathScorePerFrame, "the path alone would take it: \(scores)")
        #expect(scores.words < check.minimumWordScorePerFrame, "\(scores)")
        #expect(!check.accepts(scores))
    }

    @Test func `speech the phone loop hears where the grammar heard no word is out of grammar`() throws {
        // "what time is it" heard as silence then "deny": the scores alone pass, but the phone loop heard 60 frames
        // of phones before the word, where the grammar heard silence.
        let loop = [Segment("SIL", 0, 9, -100), Segment("W", 10, 29, -300), Segment("AH", 30, 49, -300), Segment("T", 50, 69, -300),
                    Segment("D", 70, 84, -300), Segment("AY", 85, 99, -300)]
        let grammar = [Segment("<sil>", 0, 69, -1300), Segment("deny", 70, 99, -700)]
        let scores = try #require(check.scores(grammar: grammar, phoneLoop: loop))
        #expect(scores.speechOutsideWords == 60, "\(scores)")
        #expect(scores.path >= check.minimumPathScorePerFrame && scores.words >= check.minimumWordScorePerFrame, "\(scores)")
        #expect(!check.accepts(scores))
        // A breath or a phone spilling a little past the word is not speech outside it.
        let answer = [Segment("SIL", 0, 9, -100), Segment("+NSN+", 10, 59, -500), Segment("D", 60, 84, -300), Segment("AY", 85, 99, -300)]
        let answerScores = try #require(check.scores(grammar: [Segment("<sil>", 0, 62, -700), Segment("deny", 63, 99, -700)], phoneLoop: answer))
        #expect(answerScores.speechOutsideWords == 0, "\(answerScores)")
        #expect(check.accepts(answerScores))
    }

    @Test func `a sentence the grammar stretches one word over holds too many phones for it`() throws {
        // "what is the weather like" heard as one long "deny" (4 phones): the phone loop heard 10 phones in it.
        let loop = [Segment("SIL", 0, 9, -100)] + (0..<10).map { Segment("AH", 10 + $0 * 10, 19 + $0 * 10, -100) } + [Segment("SIL", 110, 119, -100)]
        let grammar = [Segment("<sil>", 0, 9, -100), Segment("deny", 10, 109, -1500), Segment("<sil>", 110, 119, -100)]
        let stretched = try #require(check.scores(grammar: grammar, phoneLoop: loop, wordPhones: 4))
        #expect(stretched.phonesPerWordPhone == 2.5 && stretched.speechOutsideWords == 0, "\(stretched)")
        #expect(stretched.path >= check.minimumPathScorePerFrame && stretched.words >= check.minimumWordScorePerFrame, "\(stretched)")
        #expect(!check.accepts(stretched))
        // 8 phones in it (twice its phones) are too many still; 7 stand; unknown pronunciations skip the test.
        let loop8 = [Segment("SIL", 0, 9, -100)] + (0..<8).map { Segment("AH", 10 + $0 * 12, 21 + $0 * 12, -125) } + [Segment("SIL", 106, 119, -140)]
        #expect(!check.accepts(check.scores(grammar: grammar, phoneLoop: loop8, wordPhones: 4)))
        let loop7 = [Segment("SIL", 0, 9, -100)] + (0..<7).map { Segment("AH", 10 + $0 * 14, 23 + $0 * 14, -140) } + [Segment("SIL", 108, 119, -120)]
        #expect(check.accepts(check.scores(grammar: grammar, phoneLoop: loop7, wordPhones: 4)))
        #expect(check.accepts(check.scores(grammar: grammar, phoneLoop: loop, wordPhones: nil)))
    }

    @Test func `a path with no word is no answer`() {
        #expect(check.scores(grammar: [Segment("<sil>", 0, 99, -300)], phoneLoop: phoneLoop) == nil)
        #expect(!check.accepts(nil))
    }
}
