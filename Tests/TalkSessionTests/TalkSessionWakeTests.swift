import Foundation
import SessionBridge
import Testing

@testable import TalkSession

/// Wake-phrase mode on fakes: speech without a phrase never reaches the agent; what follows one does, in the same
/// utterance or the next.
@Suite struct TalkSessionWakeTests {
    static func wakeRig(agent: ScriptedAgent.Script = .reply("Sure."), holdPlayback: Bool = false) async throws -> Rig {
        var settings = TalkSession.Settings()
        settings.mode = .wakePhrase
        settings.wakePhrases = ["hey open claw", "okay claw"]
        let rig = try await Rig(agent: agent, holdPlayback: holdPlayback, settings: settings)
        await rig.session.useGatewayWakePhrases(["openclaw", "computer"])
        return rig
    }

    static func isIgnored(_ reason: String) -> @Sendable (TalkEvent.Kind) -> Bool {
        { if case .transcriptIgnored(_, let why) = $0 { why == reason } else { false } }
    }

    static func restedAfterReply(_ kind: TalkEvent.Kind) -> Bool {
        if case .stateChanged(_, .waiting, "reply done") = kind { true } else { false }
    }

    @Test func `speech without a wake phrase is ignored with an event and never sent`() async throws {
        let rig = try await Self.wakeRig()
        #expect(await rig.session.state == .waiting)
        await rig.listener.utterance("turn on the lights")
        #expect(await rig.log.waitFor(Self.isIgnored("no wake phrase")))
        await rig.listener.utterance("open the door please")
        #expect(await rig.log.waitFor(times: 2, Self.isIgnored("no wake phrase")))
        #expect(await rig.agent.sent.isEmpty)
        #expect(await rig.session.state == .waiting)
        await rig.session.stop()
    }

    @Test func `before the phrase the relay hears of no utterance; the request after a phrase said alone goes to it`() async throws {
        var settings = TalkSession.Settings()
        settings.mode = .wakePhrase
        settings.wakePhrases = ["computer"]
        let relay = RecordingTranscriptSource(words: "the relay heard this")
        let rig = try await Rig(agent: .reply("Sure."), settings: settings, transcriptSource: relay)
        await rig.listener.utterance("turn on the lights")
        #expect(await rig.log.waitFor(Self.isIgnored("no wake phrase")))
        // The phrase with its command is found in the local words, and the command goes out in them.
        await rig.listener.utterance("computer open the door")
        #expect(await rig.log.waitFor(Self.restedAfterReply))
        await rig.listener.utterance("computer")
        #expect(await rig.log.waitFor { if case .stateChanged(.waiting, .listening, "wake phrase") = $0 { true } else { false } })
        let beforeRequest = await relay.calls
        #expect(beforeRequest.isEmpty, "the relay heard of speech before the phrase: \(beforeRequest)")
        await rig.listener.utterance("what time is it")
        #expect(await rig.log.waitFor(times: 2, Self.restedAfterReply))
        #expect(await relay.calls == ["started", "ended", "transcript"])
        #expect(await rig.agent.sent.map(\.transcript) == ["open the door", "the relay heard this"])
        await rig.session.stop()
    }

    @Test func `what follows the phrase in the same utterance is sent without the phrase`() async throws {
        let rig = try await Self.wakeRig()
        await rig.listener.utterance("hey open claw turn on the lights")
        #expect(await rig.log.waitFor(Self.restedAfterReply))
        // The Gateway's "openclaw" is heard as the recogniser writes it.
        await rig.listener.utterance("okay so open claw what time is it")
        #expect(await rig.log.waitFor(times: 2, Self.restedAfterReply))
        #expect(await rig.agent.sent.map(\.transcript) == ["turn on the lights", "what time is it"])
        #expect(await rig.log.count { if case .wakePhrase("hey open claw", "turn on the lights") = $0 { true } else { false } } == 1)
        #expect(await rig.log.count { if case .wakePhrase("openclaw", "what time is it") = $0 { true } else { false } } == 1)
        // Each turn needs the phrase again.
        await rig.listener.utterance("and tomorrow")
        #expect(await rig.log.waitFor(Self.isIgnored("no wake phrase")))
        #expect(await rig.agent.sent.count == 2)
        await rig.session.stop()
    }

    @Test func `a phrase said on its own makes the next utterance the request`() async throws {
        let rig = try await Self.wakeRig()
        await rig.listener.utterance("computer")
        #expect(await rig.log.waitFor { if case .stateChanged(.waiting, .listening, "wake phrase") = $0 { true } else { false } })
        #expect(await rig.agent.sent.isEmpty)
        await rig.listener.utterance("what is the weather")
        #expect(await rig.log.waitFor(Self.restedAfterReply))
        #expect(await rig.agent.sent.map(\.transcript) == ["what is the weather"])
        await rig.session.stop()
    }

    @Test func `the Gateway's new triggers replace its old ones`() async throws {
        let rig = try await Self.wakeRig()
        await rig.session.useGatewayWakePhrases(["jarvis"])
        await rig.listener.utterance("computer turn it off")
        #expect(await rig.log.waitFor(Self.isIgnored("no wake phrase")))
        await rig.listener.utterance("jarvis turn it off")
        #expect(await rig.log.waitFor(Self.restedAfterReply))
        #expect(await rig.agent.sent.map(\.transcript) == ["turn it off"])
        await rig.session.stop()
    }

    @Test func `while a reply plays only words with the phrase cut in`() async throws {
        let rig = try await Self.wakeRig(agent: .reply(TalkSessionBargeInTests.reply), holdPlayback: true)
        await rig.listener.utterance("computer how is the weather")
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        try await TalkSessionBargeInTests.speakLoudly(into: rig)
        await TalkSessionBargeInTests.expectNoInterruption(rig, saying: "stop right there")
        await rig.listener.hear(.speechStarted(positionMs: 9000))
        await rig.listener.hear(.partial("computer stop"))
        #expect(await rig.log.waitFor(TalkSessionBargeInTests.isBargeIn))
        await rig.session.stop()
    }

    @Test func `phrases match across spaces and punctuation, earliest first`() {
        let phrases = ["openclaw", "hey open claw", "computer"]
        #expect(WakePhraseMatcher.match("OK, OpenClaw: lights on!", phrases: phrases)
            == .init(phrase: "openclaw", command: "lights on"))
        #expect(WakePhraseMatcher.match("Hey, OpenClaw: lights on!", phrases: phrases)
            == .init(phrase: "hey open claw", command: "lights on"))
        #expect(WakePhraseMatcher.match("hey open claw lights on", phrases: phrases)
            == .init(phrase: "hey open claw", command: "lights on"))
        #expect(WakePhraseMatcher.match("the computer", phrases: phrases) == .init(phrase: "computer", command: ""))
        #expect(WakePhraseMatcher.match("open the claw", phrases: phrases) == nil)
        #expect(WakePhraseMatcher.match("computers are fun", phrases: phrases) == nil)
        #expect(WakePhraseMatcher.match("anything", phrases: []) == nil)
    }
}

/// The follow-up window after a lone wake phrase, on a clock the test moves.
@Suite struct TalkSessionWakeWindowTests {
    @Test func `after a lone phrase the window closes: later speech needs the phrase again`() async throws {
        let clock = ManualClock()
        var settings = TalkSession.Settings()
        settings.mode = .wakePhrase
        settings.wakePhrases = ["computer"]
        settings.wakeFollowUp = .seconds(8)
        let rig = try await Rig(agent: .reply("Sure."), settings: settings, clock: clock.clock)
        await rig.listener.utterance("computer")
        try #require(await clock.waitForSleep(endingIn: .seconds(8)))
        clock.advance(.seconds(8))
        #expect(await rig.log.waitFor { if case .stateChanged(.listening, .waiting, "nothing said after the wake phrase") = $0 { true } else { false } })
        await rig.listener.utterance("what time is it")
        #expect(await rig.log.waitFor(TalkSessionWakeTests.isIgnored("no wake phrase")))
        #expect(await rig.agent.sent.isEmpty)
        await rig.session.stop()
    }

    @Test func `speech begun inside the window is taken, and an empty one still lets the window shut`() async throws {
        let clock = ManualClock()
        var settings = TalkSession.Settings()
        settings.mode = .wakePhrase
        settings.wakePhrases = ["computer"]
        let rig = try await Rig(agent: .reply("Sure."), settings: settings, clock: clock.clock)
        await rig.listener.utterance("computer")
        try #require(await clock.waitForSleep(endingIn: .seconds(8)))
        await rig.listener.hear(.speechStarted(positionMs: 5000))
        #expect(await rig.log.waitFor { if case .speechStarted(5000) = $0 { true } else { false } })
        clock.advance(.seconds(8))
        // The window's time is up while the user speaks: an empty final, then the window shuts.
        try #require(await clock.waitForSleep(endingIn: .seconds(1)))
        await rig.listener.hear(.final(ScriptedListener.result("")))
        #expect(await rig.log.waitFor { if case .transcriptIgnored("", "empty transcript") = $0 { true } else { false } })
        clock.advance(.seconds(1))
        #expect(await rig.log.waitFor { if case .stateChanged(.listening, .waiting, "nothing said after the wake phrase") = $0 { true } else { false } })
        await rig.listener.utterance("what time is it")
        #expect(await rig.log.waitFor(TalkSessionWakeTests.isIgnored("no wake phrase")))

        // Inside the window, speech is taken even when its final comes after the window's time.
        await rig.listener.utterance("computer")
        try #require(await clock.waitForSleep(endingIn: .seconds(8)))
        await rig.listener.hear(.speechStarted(positionMs: 9000))
        #expect(await rig.log.waitFor { if case .speechStarted(9000) = $0 { true } else { false } })
        clock.advance(.seconds(8))
        try #require(await clock.waitForSleep(endingIn: .seconds(1)))
        await rig.listener.hear(.final(ScriptedListener.result("turn off the radio")))
        #expect(await rig.log.waitFor { if case .transcriptSent("turn off the radio", _) = $0 { true } else { false } })
        #expect(await rig.agent.sent.map(\.transcript) == ["turn off the radio"])
        await rig.session.stop()
    }
}
