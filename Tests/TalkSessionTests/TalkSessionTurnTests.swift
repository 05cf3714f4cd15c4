import Foundation
import SessionBridge
import Testing

@testable import TalkSession

/// Turn-taking on fakes: what the agent receives, what is played, which states the loop goes through.
@Suite struct TalkSessionTurnTests {
    @Test func `a final transcript goes out once and its reply is spoken sentence by sentence, then the loop listens again`() async throws {
        let rig = try await Rig(agent: .reply("It is noon. Have a nice day."))
        await rig.listener.utterance("what time is it")
        #expect(await rig.log.waitFor { if case .stateChanged(.speaking, .listening, _) = $0 { true } else { false } })
        #expect(await rig.agent.sent == [.init(transcript: "what time is it", interruptedAtSeconds: nil)])
        #expect(rig.synthesizer.synthesised == ["It is noon.", "Have a nice day."])
        #expect(await rig.speaker.played.count == 2)
        #expect(await rig.log.states == [.listening, .thinking, .speaking, .listening])
        let names = await rig.log.names
        let order = ["final", "transcriptSent", "transcriptAcknowledged", "replyDelta", "speakingStarted", "replyFinal", "speakingStopped"]
        let positions = order.map { name in names.firstIndex(of: name) ?? -1 }
        #expect(!positions.contains(-1) && positions.filter { $0 > positions[0] }.count == positions.count - 1, "\(names)")
        await rig.session.stop()
        #expect(await rig.phases.phases == ["listening", "thinking", "speaking", "listening", "disabled"])
    }

    /// `--max-turns` counts `turnEnded`: one per turn, after the state the loop rests in, whatever ended it.
    @Test func `each turn ends once, after the loop rests again: a reply spoken, a failure, a barge-in`() async throws {
        @Sendable func isEnd(_ kind: TalkEvent.Kind) -> Bool { if case .turnEnded = kind { true } else { false } }
        let rig = try await Rig(agent: .reply("It is noon."))
        await rig.listener.utterance("what time is it")
        #expect(await rig.log.waitFor { if case .turnEnded(.replyDone) = $0 { true } else { false } })
        let rested = try #require(await rig.log.index { if case .stateChanged(.speaking, .listening, "reply done") = $0 { true } else { false } })
        #expect(try #require(await rig.log.index(isEnd)) > rested)
        await rig.agent.set(.fail(.agentError(kind: "timeout", message: "model overloaded")))
        await rig.listener.utterance("tell me a story")
        #expect(await rig.log.waitFor(times: 2, isEnd))
        // A transcript while the agent thinks replaces the turn: that is not the end of one.
        await rig.agent.set(.silent)
        await rig.listener.utterance("one")
        #expect(await rig.log.waitFor { if case .transcriptSent("one", _) = $0 { true } else { false } })
        await rig.agent.set(.reply("Two."))
        await rig.listener.utterance("two")
        #expect(await rig.log.waitFor { if case .speakingStopped("Two.", true) = $0 { true } else { false } })
        #expect(await rig.log.waitFor(times: 3, isEnd))
        await rig.session.stop()
        #expect(await rig.log.count(isEnd) == 3)
        let spoken = try await TalkSessionBargeInTests.speaking()
        try await TalkSessionBargeInTests.speakLoudly(into: spoken)
        await spoken.listener.hear(.speechStarted(positionMs: 5000))
        await spoken.listener.hear(.partial("stop right there"))
        #expect(await spoken.log.waitFor { if case .turnEnded(.bargeIn) = $0 { true } else { false } })
        await spoken.session.stop()
        #expect(await spoken.log.count(isEnd) == 1)
    }

    @Test func `an empty transcript is not sent and the loop keeps listening`() async throws {
        let rig = try await Rig(agent: .reply("Yes."))
        await rig.listener.utterance("")
        #expect(await rig.log.waitFor { if case .transcriptIgnored(_, "empty transcript") = $0 { true } else { false } })
        await rig.listener.utterance("hello")
        #expect(await rig.log.waitFor { if case .stateChanged(.speaking, .listening, _) = $0 { true } else { false } })
        #expect(await rig.agent.sent.map(\.transcript) == ["hello"])
        await rig.session.stop()
    }

    @Test func `a Gateway error brings the loop back to listening, and the next utterance is a new turn`() async throws {
        let rig = try await Rig(agent: .fail(.agentError(kind: "timeout", message: "model overloaded")))
        await rig.listener.utterance("tell me a story")
        #expect(await rig.log.waitFor { if case .stateChanged(.thinking, .listening, "reply done") = $0 { true } else { false } })
        #expect(await rig.log.count { if case .replyFailed(let why) = $0 { why.contains("model overloaded") } else { false } } == 1)
        await rig.agent.set(.reply("Once upon a time."))
        await rig.listener.utterance("try again")
        #expect(await rig.log.waitFor { if case .speakingStopped("Once upon a time.", true) = $0 { true } else { false } })
        #expect(await rig.agent.sent.map(\.transcript) == ["tell me a story", "try again"])
        await rig.session.stop()
    }

    @Test func `a Gateway that never answers gives the turn up after the reply timeout`() async throws {
        // The reply timeout runs on a manual clock: it runs out when the test says, however loaded the machine.
        let clock = ManualClock()
        var settings = TalkSession.Settings()
        settings.replyTimeout = .milliseconds(300)
        let rig = try await Rig(agent: .silent, settings: settings, clock: clock.clock)
        let givenUp: @Sendable (TalkEvent.Kind) -> Bool = { if case .stateChanged(.thinking, .listening, "no reply") = $0 { true } else { false } }
        await rig.listener.utterance("are you there")
        #expect(await clock.waitForSleep(endingIn: .milliseconds(300)), "the turn's watchdog never started")
        clock.advance(.milliseconds(300))
        #expect(await rig.log.waitFor(givenUp))
        // The next turn is taken and answered.
        await rig.agent.set(.reply("I am."))
        await rig.listener.utterance("hello")
        #expect(await rig.log.waitFor { if case .speakingStopped("I am.", true) = $0 { true } else { false } })
        #expect(await rig.log.count(givenUp) == 1, "only the unanswered turn was given up")
        #expect(await rig.agent.sent.map(\.transcript) == ["are you there", "hello"])
        await rig.session.stop()
    }

    @Test func `an agent silent for two minutes, as one running tools may be, is still waited for by default`() async throws {
        let clock = ManualClock()
        let rig = try await Rig(agent: .manual, clock: clock.clock)
        await rig.listener.utterance("book a table for tonight")
        #expect(await rig.log.waitFor { if case .transcriptSent = $0 { true } else { false } })
        // The loop's watchdog for this turn is asleep; two minutes pass with no word from the agent.
        #expect(await clock.waitForSleep(endingIn: TalkSession.Settings().replyTimeout))
        clock.advance(.seconds(120))
        await rig.agent.write(.final("Done: a table for two at eight.", source: .events))
        #expect(await rig.log.waitFor { if case .speakingStopped("Done: a table for two at eight.", true) = $0 { true } else { false } })
        #expect(await rig.log.count { if case .stateChanged(.thinking, .listening, "no reply") = $0 { true } else { false } } == 0)
        #expect(TalkSession.Settings().replyTimeout >= .seconds(300), "the default patience is minutes")
        await rig.session.stop()
    }

    /// A turn whose reply ("The answer is four.") is complete while the user has started speaking again.
    static func replyWhileTheUserSpeaks() async throws -> Rig {
        let rig = try await Rig(agent: .manual)
        await rig.listener.utterance("first question")
        #expect(await rig.log.waitFor { if case .transcriptSent = $0 { true } else { false } })
        await rig.listener.hear(.speechStarted(positionMs: 3000))
        #expect(await rig.log.waitFor { if case .speechStarted(3000) = $0 { true } else { false } })
        await rig.agent.write(.final("The answer is four.", source: .events))
        #expect(await rig.log.waitFor { if case .replyFinal = $0 { true } else { false } })
        return rig
    }

    /// Waits (bounded) until the reply's first sentence is synthesised and its speaker waits for the floor: the
    /// loop has taken the reply and holds it; a loop that ignored the user would have played it instead.
    static func replyHeld(_ rig: Rig) async -> Bool {
        await TalkSessionReplyLevelTests.eventually { await rig.session.floorWaiters.count == 1 }
    }

    @Test func `a reply that arrives while the user speaks waits for them, and is dropped when they say something new`() async throws {
        let rig = try await Self.replyWhileTheUserSpeaks()
        #expect(await Self.replyHeld(rig), "the reply's first sentence never waited for the user")
        #expect(await rig.speaker.played.isEmpty)
        await rig.agent.set(.reply("Sure."))
        await rig.listener.hear(.final(ScriptedListener.result("second question")))
        #expect(await rig.log.waitFor { if case .speakingStopped("Sure.", true) = $0 { true } else { false } })
        #expect(await rig.log.count { if case .speakingStarted("The answer is four.", _) = $0 { true } else { false } } == 0)
        #expect(await rig.agent.sent.map(\.transcript) == ["first question", "second question"])
        await rig.session.stop()
    }

    @Test func `a held reply is spoken once the user's utterance turns out empty`() async throws {
        let rig = try await Self.replyWhileTheUserSpeaks()
        #expect(await Self.replyHeld(rig), "the reply's first sentence never waited for the user")
        #expect(await rig.speaker.played.isEmpty)
        await rig.listener.hear(.final(ScriptedListener.result("")))
        #expect(await rig.log.waitFor { if case .speakingStopped("The answer is four.", true) = $0 { true } else { false } })
        let ignored = await rig.log.index { if case .transcriptIgnored = $0 { true } else { false } }
        let spoken = await rig.log.index { if case .speakingStarted = $0 { true } else { false } }
        #expect(ignored != nil && spoken != nil && ignored! < spoken!, "spoken before the user had finished")
        await rig.session.stop()
    }
}
