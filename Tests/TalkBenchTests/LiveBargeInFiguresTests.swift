import SessionBridge
import TalkBench
import Testing

/// What `bench talk` reports of its barge-in trials beyond recall: a trial whose reply stopped but whose turn never
/// reached the Gateway is shown, not left out.
@Suite struct LiveBargeInFiguresTests {
    @Test func `a stopped reply whose turn never reached the Gateway shows in the JSON and the text`() {
        var figures = LiveBargeInFigures()
        (figures.trials, figures.stopped, figures.words.withWords, figures.words.firstWordFirst, figures.noTurnAfter) = (20, 20, 18, 15, 2)
        #expect(figures.json["noTurnAfter"]?.intValue == 2)
        #expect(figures.text.contains("with the user's words (their turn's audio, dictation, WER <= 0.25) in 18, 'go' first in 15, no turn after it in 2"))
    }

    @Test func `a reply its own echo cut before the user spoke is not counted as stopped by the user`() {
        var figures = LiveBargeInFigures()
        (figures.trials, figures.stopped, figures.cutBeforeUser) = (20, 19, 1)
        #expect(figures.json["cutBeforeUser"]?.intValue == 1)
        #expect(figures.text.contains("stopped it in 19 of 20"))
        #expect(figures.text.contains("(1 cut by their own echo before the user spoke)"))
    }
}
