import SessionBridge
import TalkBench
import Testing

/// How `bench talk` judges a self-echo trial from its session's events (kept sessions' real lines,
/// `SelfEchoSessions`) and the realtime relay's record: every way the reply interrupted itself counts, in both modes.
@Suite struct SelfEchoVerdictTests {
    typealias Reason = SelfEchoVerdict.Reason
    static let realtimeTurn = "final"
    static let nativeTurn = "transcriptSent"

    static func relayLog(_ lines: String) -> [JSONValue] { SelfEchoSessions.events(lines) }
    /// The relay's log of a turn the client's barge-in guard cut: the client cancelled the answer.
    static let guardCancelled = relayLog(#"""
        {"kind":"server-vad-clear","ts":1796702574350,"sessionId":"s1","turnId":"t1","answerCancelled":false}
        {"kind":"cancel","ts":1796702587606,"sessionId":"s1","turnId":"a1","reason":"barge-in","status":"applied"}
        """#)
    /// The relay's log of an answer its provider VAD cleared: no cancel from the client.
    static let relayCleared = relayLog(#"""
        {"kind":"server-vad-clear","ts":1796702574350,"sessionId":"s1","turnId":"t1","answerCancelled":false}
        {"kind":"server-vad-clear","ts":1796702587606,"sessionId":"s1","turnId":"t2","answerCancelled":true}
        """#)

    @Test func `a realtime answer cut by the output queue's overflow and answered twice more interrupted itself`() {
        let verdict = SelfEchoVerdict(events: SelfEchoSessions.realtimeOverflowAnsweredAgain, turnEvent: Self.realtimeTurn,
                                      relay: .init(log: [], turns: 1))
        #expect(verdict.reasons == [.playbackOverflow, .answeredAgain])
        #expect(verdict.replied && verdict.finished)
        #expect(verdict.partial == nil)
    }

    @Test func `the overflow counts from the client's cancel when the relay recorded it`() {
        var events = SelfEchoSessions.realtimeOverflowAnsweredAgain
        events.removeAll { $0["event"] == "error" }
        #expect(SelfEchoVerdict(events: events, turnEvent: Self.realtimeTurn, relay: .init(log: [], turns: 1)).reasons == [.answeredAgain])
        let log = Self.relayLog(#"{"kind":"cancel","ts":1,"sessionId":"s1","turnId":"a1","reason":"playback-overflow","status":"applied"}"#)
        #expect(SelfEchoVerdict(events: events, turnEvent: Self.realtimeTurn, relay: .init(log: log, turns: 1)).reasons
            == [.playbackOverflow, .answeredAgain])
    }

    @Test func `a realtime answer played once to its end is clean`() {
        let verdict = SelfEchoVerdict(events: SelfEchoSessions.realtimeClean, turnEvent: Self.realtimeTurn,
                                      relay: .init(log: Self.relayLog(#"{"kind":"answered","ts":1,"sessionId":"s1"}"#), turns: 1))
        #expect(verdict.reasons.isEmpty)
        #expect(!verdict.interrupted)
        #expect(verdict.replied && verdict.finished)
    }

    @Test func `a realtime cut is the guard's when the client cancelled the answer, the relay's when it cleared it`() {
        let events = SelfEchoSessions.realtimeCutAndAnsweredAgain
        let byGuard = SelfEchoVerdict(events: events, turnEvent: Self.realtimeTurn, relay: .init(log: Self.guardCancelled, turns: 2))
        #expect(byGuard.reasons == [.bargeIn, .echoTurn, .answeredAgain])
        let byRelay = SelfEchoVerdict(events: events, turnEvent: Self.realtimeTurn, relay: .init(log: Self.relayCleared, turns: 2))
        #expect(byRelay.reasons == [.relayCleared, .echoTurn, .answeredAgain])
        #expect(byRelay.partial == "")
    }

    @Test func `an echo turn the relay answered without words shows by the relay's turns`() {
        // The realtime client shows no `final` for a turn without words: the relay's own count shows it.
        let verdict = SelfEchoVerdict(events: SelfEchoSessions.realtimeClean, turnEvent: Self.realtimeTurn, relay: .init(log: [], turns: 2))
        #expect(verdict.reasons == [.echoTurn])
    }

    @Test func `a native reply cut by its echo's 'but', the echo sent as a turn and answered, interrupted itself three ways`() {
        let verdict = SelfEchoVerdict(events: SelfEchoSessions.nativeCutByBut, turnEvent: Self.nativeTurn)
        #expect(verdict.reasons == [.bargeIn, .echoTurn, .answeredAgain])
        #expect(verdict.partial == "but")
        #expect(verdict.finished)
    }

    @Test func `a native reply played to its end is clean`() {
        let verdict = SelfEchoVerdict(events: SelfEchoSessions.nativeClean, turnEvent: Self.nativeTurn)
        #expect(verdict.reasons.isEmpty)
        #expect(verdict.replied && verdict.finished)
    }

    @Test func `a reply still playing when the bench stopped the session is unfinished, and none at all is no reply`() {
        let playing = SelfEchoSessions.realtimeClean.prefix { $0["message"] != "mark reply-end acknowledged" }
        let stopped = SelfEchoSessions.events(
            #"{"event":"state","from":"speaking","monotonicMs":86000,"reason":"stopped","time":"2026-12-06T03:59:42.000Z","to":"idle"}"#)
        let unfinished = SelfEchoVerdict(events: Array(playing) + stopped, turnEvent: Self.realtimeTurn, relay: .init(log: [], turns: 1))
        #expect(unfinished.replied && !unfinished.finished)
        #expect(unfinished.reasons.isEmpty)
        let silent = SelfEchoVerdict(events: Array(SelfEchoSessions.realtimeClean.prefix(2)), turnEvent: Self.realtimeTurn)
        #expect(!silent.replied && !silent.finished)
    }

    @Test func `the figures count each interrupted trial once and list its reasons`() throws {
        var figures = LiveTalkFigures.SelfEcho()
        figures.add(SelfEchoVerdict(events: SelfEchoSessions.nativeClean, turnEvent: Self.nativeTurn))
        figures.add(SelfEchoVerdict(events: SelfEchoSessions.nativeCutByBut, turnEvent: Self.nativeTurn))
        var unfinished = SelfEchoVerdict()
        unfinished.replied = true
        figures.add(unfinished)
        figures.add(SelfEchoVerdict())
        #expect((figures.trials, figures.selfInterruptions, figures.echoTurns, figures.replyUnfinished, figures.noReply) == (4, 1, 1, 1, 1))
        #expect(figures.interruptingPartials == ["but"])
        let json = figures.json
        #expect(json["byReason"]?["barge-in"]?.intValue == 1)
        #expect(json["byReason"]?["relay-cleared"]?.intValue == 0)
        let cut = try #require(json["interruptions"]?.arrayValue?.first)
        #expect(cut["trial"]?.intValue == 1)
        #expect(cut["reasons"] == ["barge-in", "echo-turn", "answered-again"])
        #expect(figures.text(mode: "webrtc").contains("interrupted itself in 1 of 4 trials (barge-in 1, echo-turn 1, answered-again 1)"))
        #expect(figures.text(mode: "webrtc").contains("reply unfinished in 1"))
    }
}
