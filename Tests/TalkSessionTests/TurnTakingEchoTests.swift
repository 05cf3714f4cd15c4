import SessionBridge
import Testing

@testable import TalkSession

/// `TurnTaking` on an utterance the reply's echo may have opened (rows, as `TurnTakingTests`): the echo's words
/// before the user's own sound are dropped from the turn, and speech that ended within the echo's tail after the
/// reply, in the capture stream's time, is no turn however late the recogniser reports it.
@Suite struct TurnTakingEchoTests {
    typealias Row = TurnTakingTests.Row
    typealias E = TurnTaking.Event
    typealias Word = TurnTaking.HeardTiming.Word
    static let speaking = TurnTakingTests.speaking

    /// "i don't" from the echo of a sentence's end (4.9 s to 5.5 s), then the user's "go forward ten meters" from 5.6 s.
    static let words = [
        Word("i", startMs: 4900, endMs: 5050), Word("don't", startMs: 5050, endMs: 5500), Word("go", startMs: 5560, endMs: 5800),
        Word("forward", startMs: 5800, endMs: 6200), Word("ten", startMs: 6200, endMs: 6450), Word("meters", startMs: 6450, endMs: 6900),
    ]
    static let heard = "i don't go forward ten meters"

    /// The echo opened an utterance at 4.9 s; the user's words over it cut the reply off.
    static let bargedIn: [E] = speaking + [
        .speechStarted(positionMs: 4900, atNs: 1_500_000_000),
        .bargeInEvidence(partial: "i don't go forward", BargeInEvidence(speechMs: 400), loudEnough: true, atNs: 1_900_000_000),
        .speechEnded(lastSpeechEndMs: 6900, closedAtMs: 7800, endedNs: 2_500_000_000),
    ]
    /// The echo opened an utterance at 4.9 s without cutting in; the reply ended with the capture at 5.5 s.
    static func openedOverReply(speechEndMs: Int, endedNs: UInt64) -> [E] {
        speaking + [
            .speechStarted(positionMs: 4900, atNs: 1_500_000_000), .replyEnded(atNs: 3_000_000_000, heardToMs: 5500),
            .speechEnded(lastSpeechEndMs: speechEndMs, closedAtMs: speechEndMs + 900, endedNs: endedNs),
        ]
    }

    static func turn(_ number: Int, _ text: String, interruptedAt: Double? = nil) -> [TurnTaking.Action] {
        [.sendTurn(number: number, transcript: text, interruptedAtSeconds: interruptedAt), .arm(.replyTimeout, .seconds(340)),
         .emit(.stateChanged(from: .listening, to: .thinking, reason: "transcript sent")), .announce(.thinking)]
    }

    static func ignored(_ text: String, _ reason: String) -> TurnTaking.Action { .emit(.transcriptIgnored(text: text, reason: reason)) }
    static let overReply = "heard while the reply played, without interrupting it"
    static let echoBefore = ignored("i don't", "the reply's echo, before the user's own sound")

    /// A row whose event is the final `text` (the local recogniser's words: `heard`, timed by `words`, unless said)
    /// with the user's sound at `sound` (nil: no timing); a turn when `actions` ends in one, else the loop listens.
    static func final(
        _ name: String, after before: [E], _ text: String = heard, words: [Word] = words, sound: UserSound?, actions: [TurnTaking.Action]
    ) -> Row {
        let timing = sound.map { TurnTaking.HeardTiming(words: words, userSound: $0) }
        let turn = actions.contains { if case .sendTurn = $0 { true } else { false } }
        return Row(name: name, before: before, event: .final(text, timing: timing), actions: actions, state: turn ? .thinking : .listening)
    }

    static let firefox = [Word("firefox", startMs: 5200, endMs: 6100)]
    static let itLives = [Word("it", startMs: 4900, endMs: 5000), Word("lives", startMs: 5000, endMs: 5300)]

    /// The echo of the reply's last word opened an utterance at 4.9 s in the capture stream; the reply ended with the
    /// capture at 5.5 s, and the utterance's start was reported 100 ms after that.
    static func reportedLate(speechEndMs: Int) -> [E] {
        speaking + [
            .replyEnded(atNs: 3_000_000_000, heardToMs: 5500), .speechStarted(positionMs: 4900, atNs: 3_100_000_000),
            .speechEnded(lastSpeechEndMs: speechEndMs, closedAtMs: speechEndMs + 900, endedNs: 3_900_000_000),
        ]
    }

    static let rows: [Row] = [
        final("after a barge-in the echo's words before the user's sound are dropped from the turn", after: bargedIn,
              sound: .from(ms: 5560), actions: [echoBefore] + turn(2, "go forward ten meters", interruptedAt: 0.9)),
        final("a word that reaches into the user's sound is theirs", after: bargedIn, sound: .from(ms: 5300),
              actions: [ignored("i", "the reply's echo, before the user's own sound")] + turn(2, "don't go forward ten meters", interruptedAt: 0.9)),
        final("after a barge-in, words that all lie before the user's sound stay as heard", after: bargedIn, sound: .from(ms: 7000),
              actions: turn(2, heard, interruptedAt: 0.9)),
        final("after a barge-in, an utterance the reply explains whole is no turn", after: bargedIn, sound: .echoOnly,
              actions: [ignored(heard, "the reply's echo: none of it is the user's own sound")]),
        final("unmeasured, nothing is dropped", after: bargedIn, sound: .unknown, actions: turn(2, heard, interruptedAt: 0.9)),
        final("words that are not the final's (the relay's) are not cut by the local words' times", after: bargedIn,
              "go forward ten meters please", sound: .from(ms: 5560), actions: turn(2, "go forward ten meters please", interruptedAt: 0.9)),
        final("an utterance the echo opened that went on after the reply loses the echo's words",
              after: openedOverReply(speechEndMs: 6900, endedNs: 4_500_000_000), sound: .from(ms: 5560),
              actions: [echoBefore] + turn(2, "go forward ten meters")),
        final("speech that ended within the echo's tail in the stream is no turn, however late the recogniser reports it",
              after: openedOverReply(speechEndMs: 6100, endedNs: 5_000_000_000), "firefox", words: firefox, sound: .from(ms: 5700),
              actions: [ignored("firefox", overReply)]),
        final("without the stream's position the echo's tail is counted from when the reply ended",
              after: speaking + [.speechStarted(positionMs: 4900, atNs: 1_500_000_000), .replyEnded(atNs: 3_000_000_000),
                                 .speechEnded(lastSpeechEndMs: 6100, closedAtMs: 7000, endedNs: 3_600_000_000)],
              "firefox", sound: nil, actions: [ignored("firefox", overReply)]),
        final("an utterance over the reply whose sound the reply explains whole is no turn",
              after: openedOverReply(speechEndMs: 6900, endedNs: 4_500_000_000), "firefox", words: firefox, sound: .echoOnly,
              actions: [ignored("firefox", "the reply's echo: none of it is the user's own sound")]),
        final("an utterance after the reply, not opened over it, is taken whole",
              after: speaking + [.replyEnded(atNs: 3_000_000_000, heardToMs: 4800), .speechStarted(positionMs: 4900, atNs: 3_500_000_000),
                                 .speechEnded(lastSpeechEndMs: 6900, closedAtMs: 7800, endedNs: 4_500_000_000)],
              sound: .from(ms: 5560), actions: turn(2, heard)),
        final("an utterance heard while the reply played but reported after it ended is judged as opened over it",
              after: reportedLate(speechEndMs: 5300), "it lives", words: itLives, sound: nil,
              actions: [ignored("it lives", overReply)]),
        final("an utterance long after the reply, at a stream position before its end (the capture reopened), is taken whole",
              after: speaking + [.replyEnded(atNs: 3_000_000_000, heardToMs: 5500), .control(.pause), .control(.resume),
                                 .speechStarted(positionMs: 400, atNs: 9_000_000_000),
                                 .speechEnded(lastSpeechEndMs: 2400, closedAtMs: 3300, endedNs: 10_000_000_000)],
              sound: .from(ms: 5560), actions: turn(2, heard)),
        final("reported late, its echo's words are dropped from the user's turn",
              after: reportedLate(speechEndMs: 6900), sound: .from(ms: 5560), actions: [echoBefore] + turn(2, "go forward ten meters")),
        final("the echo of the reply's last word, reported 735 ms after the reply ended on a loaded machine, is no turn",
              after: loadedEcho(positionMs: 30080, speechEndMs: 30420), "sent", words: sent, sound: nil,
              actions: [ignored("sent", overReply)]),
        final("a user who answers right after the reply ended, reported as late, is heard",
              after: loadedEcho(positionMs: 30400, speechEndMs: 31900), "go forward", words: goForward, sound: nil,
              actions: turn(2, "go forward")),
    ]

    static let sent = [Word("sent", startMs: 30080, endMs: 30420)]
    static let goForward = [Word("go", startMs: 30400, endMs: 30700), Word("forward", startMs: 30700, endMs: 31900)]

    /// A loaded machine (live/webrtc-8 of a 25 s local-voice self-echo run: three builds and three live loops): the reply
    /// ended at 32.065 s with the capture at 30.36 s (stream positions, the canceller's log put beside the endpointer's);
    /// the utterance that opened at `positionMs` was reported 735 ms after the reply ended, its end 1.24 s after.
    static func loadedEcho(positionMs: Int, speechEndMs: Int) -> [E] {
        speaking + [
            .replyEnded(atNs: 32_065_000_000, heardToMs: 30360), .speechStarted(positionMs: positionMs, atNs: 32_800_000_000),
            .speechEnded(lastSpeechEndMs: speechEndMs, closedAtMs: speechEndMs + 700, endedNs: 33_305_000_000),
        ]
    }

    @Test(arguments: rows)
    func `event to actions`(row: Row) { row.check() }
}
