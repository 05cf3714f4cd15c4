import Foundation
import SessionBridge
import TalkBench
import Testing

/// How `bench talk --live-stt local` judges a native barge-in trial: the user's words are the transcript the client
/// sent after the cut (`SentUserWords`), its own recogniser's, as a Gateway with no Talk provider gets them. The
/// events are a kept session's lines (f27 binary, PulseAudio, local voice, bargein-0: the question's final, the
/// reply, the barge-in on "that though", the user's final), with the finals the local recogniser's
/// (`pocketsphinx`): the user's missing its clipped first word, as the live decoder hears a barge-in's onset.
@Suite struct SentUserWordsTests {
    static let spoken = "go forward ten meters"
    static let events = SelfEchoSessions.events(#"""
        {"event":"state","from":"idle","monotonicMs":7,"reason":"started","time":"2026-12-06T15:13:18.311Z","to":"listening"}
        {"event":"speechStarted","monotonicMs":2327,"positionMs":520,"time":"2026-12-06T15:13:20.631Z"}
        {"endMs":2260,"endToFinalMs":41.3,"engine":"pocketsphinx","event":"final","monotonicMs":4199,"startMs":520,"text":"go forward ten meters","time":"2026-12-06T15:13:22.503Z"}
        {"event":"transcriptSent","interruptedAtSeconds":null,"monotonicMs":4201,"text":"go forward ten meters","time":"2026-12-06T15:13:22.505Z"}
        {"event":"speakingStarted","monotonicMs":4233,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T15:13:22.537Z","voice":"local:en-us"}
        {"event":"speechStarted","monotonicMs":6789,"positionMs":4500,"time":"2026-12-06T15:13:25.093Z"}
        {"detectionLatencyMs":176.9,"event":"bargeIn","monotonicMs":6966,"offsetSeconds":2.05,"partial":"that though","time":"2026-12-06T15:13:25.270Z"}
        {"event":"state","from":"speaking","monotonicMs":6966,"reason":"barge-in","time":"2026-12-06T15:13:25.270Z","to":"listening"}
        {"closedAtMs":7400,"event":"speechEnded","lastSpeechEndMs":6700,"monotonicMs":8950,"time":"2026-12-06T15:13:27.254Z"}
        {"endMs":6700,"endToFinalMs":38.2,"engine":"pocketsphinx","event":"final","monotonicMs":8990,"startMs":4500,"text":"forward ten meters","time":"2026-12-06T15:13:27.294Z"}
        {"event":"transcriptSent","interruptedAtSeconds":2.05,"monotonicMs":8992,"text":"forward ten meters","time":"2026-12-06T15:13:27.296Z"}
        {"event":"speakingStarted","monotonicMs":9010,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T15:13:27.314Z","voice":"local:en-us"}
        {"event":"state","from":"speaking","monotonicMs":9843,"reason":"stopped","time":"2026-12-06T15:13:28.147Z","to":"idle"}
        """#)

    @Test func `the words judged are the transcript sent after the cut, not the question's`() {
        #expect(SentUserWords.native(events: Self.events) == .sent("forward ten meters"))
    }

    @Test func `no transcript after the cut lost the user's words; no cut, no user's turn`() {
        let unsent = Array(Self.events.prefix(while: { $0["monotonicMs"]?.intValue != 8992 }))
        #expect(SentUserWords.native(events: unsent) == .noTurnAfter)
        #expect(SentUserWords.native(events: Self.events.filter { $0["event"] != "bargeIn" }) == .notCut)
    }

    @Test func `a local row's figures say the sent transcript was judged, and count its lost first word`() {
        var figures = LiveBargeInFigures()
        (figures.trials, figures.stopped, figures.liveSTT) = (1, 1, .local)
        if case .sent(let words) = SentUserWords.native(events: Self.events) { figures.count(words: words, spoken: Self.spoken) }
        #expect(figures.json["liveSTT"] == "local")
        #expect(figures.json["wordsFrom"]?.stringValue?.hasPrefix("the transcript the client sent (run --stt local)") == true)
        #expect(figures.json["withWords"]?.intValue == 1)
        #expect(figures.json["goFirst"]?.intValue == 0)
        #expect(figures.text.contains("with the user's words (the transcript sent by run --stt local, WER <= 0.25) in 1, 'go' first in 0"))
    }

    @Test func `local runs the sessions with run --stt local; relay, as run does by default`() {
        #expect(TalkBenchConditions(liveSTT: .local).runArguments == ["--stt", "local"])
        #expect(TalkBenchConditions().runArguments.isEmpty)
        #expect(TalkBenchConditions(realtime: true, liveSTT: .local).runArguments == ["--mode", "realtime"])
    }
}
