import Foundation
import SessionBridge
import TalkBench
import TalkTestSupport
import Testing

/// How `bench talk` finds, in a native barge-in trial, the transcription relay turns the user's utterance went out
/// in (`RelayUserTurn.native`), and judges its words from their audio, the relay stand-in's transcript kept beside
/// them. The events are a kept session's real lines (f27 binary, PulseAudio, local voice, bargein-0: the question's
/// final, the reply, the barge-in on "that though", the user's final 2.3 s later); the relay turns are `relay-turns`
/// entries of that trial's shape, finished at the wall-clock times the relay stamps.
@Suite struct NativeRelayUserTurnTests {
    static let events = SelfEchoSessions.events(#"""
        {"event":"state","from":"idle","monotonicMs":7,"reason":"started","time":"2026-12-06T15:13:18.311Z","to":"listening"}
        {"event":"speechStarted","monotonicMs":2327,"positionMs":520,"time":"2026-12-06T15:13:20.631Z"}
        {"endMs":2260,"endToFinalMs":722.1,"engine":"gateway-relay","event":"final","monotonicMs":4879,"startMs":520,"text":"go forward ten meters","time":"2026-12-06T15:13:23.183Z"}
        {"event":"transcriptSent","interruptedAtSeconds":null,"monotonicMs":4882,"text":"go forward ten meters","time":"2026-12-06T15:13:23.186Z"}
        {"event":"speakingStarted","monotonicMs":4914,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T15:13:23.218Z","voice":"local:en-us"}
        {"event":"speechStarted","monotonicMs":6789,"positionMs":4500,"time":"2026-12-06T15:13:25.093Z"}
        {"detectionLatencyMs":176.9,"event":"bargeIn","monotonicMs":6966,"offsetSeconds":2.05,"partial":"that though","time":"2026-12-06T15:13:25.270Z"}
        {"event":"state","from":"speaking","monotonicMs":6966,"reason":"barge-in","time":"2026-12-06T15:13:25.270Z","to":"listening"}
        {"closedAtMs":7400,"event":"speechEnded","lastSpeechEndMs":6700,"monotonicMs":8950,"time":"2026-12-06T15:13:27.254Z"}
        {"endMs":6700,"endToFinalMs":700.8,"engine":"gateway-relay","event":"final","monotonicMs":9254,"startMs":4500,"text":"go forward ten meters","time":"2026-12-06T15:13:27.558Z"}
        {"event":"transcriptSent","interruptedAtSeconds":2.05,"monotonicMs":9256,"text":"go forward ten meters","time":"2026-12-06T15:13:27.560Z"}
        {"event":"speakingStarted","monotonicMs":9274,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T15:13:27.578Z","voice":"local:en-us"}
        {"event":"state","from":"speaking","monotonicMs":9843,"reason":"stopped","time":"2026-12-06T15:13:28.147Z","to":"idle"}
        """#)

    /// A relay turn as `relay-turns` lists it, dumped to `/b/turn-<id>.wav`, finished at `finalAtMs` (wall clock).
    static func turn(_ id: String, finalAtMs: Int64, mode: String = "transcription") -> JSONValue {
        ["mode": .string(mode), "turnId": .string(id), "encoding": "pcm16", "sampleRateHz": 16_000, "text": "go forward ten meters",
         "finalAtMs": .int(finalAtMs), "speechStartMs": .null, "wav": .string("/b/turn-\(id).wav")]
    }

    /// The question's turn (its final at 15:13:23.180), an echo utterance's turn finished over the reply
    /// (15:13:24.100, before the cut at 15:13:25.270), the user's (15:13:27.550, before the transcript went at
    /// .560), and the silence the uplink sent after it, committed when the session closed (15:13:28.150).
    static let turns = [
        turn("question", finalAtMs: 1_796_570_003_180), turn("echo", finalAtMs: 1_796_570_004_100),
        turn("user", finalAtMs: 1_796_570_007_550), turn("closing", finalAtMs: 1_796_570_008_150),
    ]

    @Test func `the user's words are in the transcription turns finished between the cut and the transcript sent`() {
        #expect(RelayUserTurn.native(events: Self.events, turns: Self.turns) == .answered([RelayUserTurn(audio: "/b/turn-user.wav")]))
    }

    @Test func `a relay slower than the client's wait still gives the turn the user's audio went out in`() {
        // The client sent its own words at .560; the relay finished the user's turn at 15:13:27.900.
        let late = [Self.turns[0], Self.turns[1], Self.turn("user", finalAtMs: 1_796_570_007_900), Self.turns[3]]
        #expect(RelayUserTurn.native(events: Self.events, turns: late) == .answered([RelayUserTurn(audio: "/b/turn-user.wav")]))
    }

    @Test func `an utterance the relay split into two turns is judged from both`() {
        let split = [Self.turns[0], Self.turn("first", finalAtMs: 1_796_570_006_000), Self.turns[2], Self.turns[3]]
        #expect(RelayUserTurn.native(events: Self.events, turns: split)
            == .answered([RelayUserTurn(audio: "/b/turn-first.wav"), RelayUserTurn(audio: "/b/turn-user.wav")]))
    }

    @Test func `no transcript sent after the cut lost the user's words; no cut, no user's turn`() {
        let unsent = Array(Self.events.prefix(while: { $0["monotonicMs"]?.intValue != 9256 }))
        #expect(RelayUserTurn.native(events: unsent, turns: Self.turns) == .noTurnAfter)
        #expect(RelayUserTurn.native(events: Self.events.filter { $0["event"] != "bargeIn" }, turns: Self.turns) == .notCut)
    }

    @Test func `a realtime turn is not a native user's turn`() {
        let realtime = [Self.turns[0], Self.turn("user", finalAtMs: 1_796_570_007_550, mode: "realtime")]
        #expect(RelayUserTurn.native(events: Self.events, turns: realtime) == .answered([]))
    }
}

/// The figures a native barge-in row reports: the words recognised of the audio decide "with words" and "'go'
/// first"; the relay stand-in's transcript, which answers a clipped first word with the whole clip, is the second
/// figure (`relayStandIn`).
@Suite struct BargeInWordsFromAudioTests {
    static let spoken = "go forward ten meters"

    @Test func `a clipped first word shows in the audio's figures, not hidden by the stand-in's`() {
        var figures = LiveBargeInFigures()
        (figures.trials, figures.stopped) = (3, 3)
        for (audio, standIn) in [("go forward ten meters", "go forward ten meters"), ("forward ten meters", "go forward ten meters"),
                                 ("or were ten meters", "go forward ten meters")] {
            figures.count(words: audio, spoken: Self.spoken)
            figures.countStandIn(standIn, spoken: Self.spoken)
        }
        #expect(figures.json["withWords"]?.intValue == 2)
        #expect(figures.json["goFirst"]?.intValue == 1)
        #expect(figures.json["heard"] == ["go forward ten meters", "forward ten meters", "or were ten meters"])
        #expect(figures.json["relayStandIn"]?["withWords"]?.intValue == 3)
        #expect(figures.json["relayStandIn"]?["goFirst"]?.intValue == 3)
        #expect(figures.text.contains("with the user's words (their turn's audio, dictation, WER <= 0.25) in 2, 'go' first in 1, no turn after it in 0"))
        #expect(figures.text.contains("relay stand-in words in 3"))
    }

    @Test func `the echo's word before the user's counts against the first word, not against the words`() {
        var words = HeardWords()
        #expect(words.count("that go forward ten meters", spoken: Self.spoken) == 0.25)
        #expect((words.withWords, words.firstWordFirst) == (1, 0))
    }

    @Test func `realtime rows have no stand-in figure`() {
        var figures = LiveBargeInFigures()
        figures.count(words: "go forward ten meters", spoken: Self.spoken)
        #expect(figures.json["relayStandIn"] == nil)
        #expect(!figures.text.contains("stand-in"))
    }
}
