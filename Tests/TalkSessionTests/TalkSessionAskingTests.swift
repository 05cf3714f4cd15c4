import Foundation
import SessionBridge
import Testing

@testable import TalkSession

/// Where the prompt's outcome goes, recorded.
actor RecordingApprovalAnswers: ApprovalAnswers {
    private(set) var resolved: [String] = []
    private(set) var leftPending: [String] = []

    func resolve(id: String, decision: ApprovalDecision) -> ApprovalResolveError? {
        resolved.append("\(id) \(decision.rawValue)")
        return nil
    }

    func leavePending(_ approval: PendingApproval) { leftPending.append(approval.id) }
}

/// The spoken approval prompt on the session's fakes, its timers on a clock the test moves: the question is spoken,
/// the answer heard through the listener decides exactly the approval read out, and the fallbacks leave it pending.
@Suite struct TalkSessionAskingTests {
    static let approval = PendingApproval(id: "ap-1", kind: .exec, createdAtMs: 0, expiresAtMs: 60_000, command: "rm -rf build")
    static let second = PendingApproval(id: "ap-2", kind: .exec, createdAtMs: 0, expiresAtMs: 60_000, command: "ls")
    static let question = ApprovalPrompt.question(for: approval)

    struct Asked {
        let rig: Rig
        let clock: ManualClock
        let answers = RecordingApprovalAnswers()
    }

    /// Talk on, the approval asked: returns once its question has been spoken.
    static func asked(holdPlayback: Bool = false, agent: ScriptedAgent.Script = .silent) async throws -> Asked {
        let clock = ManualClock()
        let asked = Asked(rig: try await Rig(agent: agent, holdPlayback: holdPlayback, clock: clock.clock), clock: clock)
        #expect(await asked.rig.session.ask(approval, answers: asked.answers))
        #expect(await asked.rig.log.waitFor { if case .speakingStarted(Self.question, _) = $0 { true } else { false } })
        return asked
    }

    /// The question played to its end: the mute tail runs out and the answer is listened for.
    static func opened(_ asked: Asked, times: Int = 1) async throws {
        try #require(await asked.clock.waitForSleep(endingIn: BargeInPolicy().muteTail))
        asked.clock.advance(BargeInPolicy().muteTail)
        try #require(await asked.rig.log.waitFor(times: times, Self.step("listening")))
    }

    static func step(_ step: String) -> @Sendable (TalkEvent.Kind) -> Bool {
        { if case .approvalPrompt(_, step, _) = $0 { true } else { false } }
    }

    static func said(_ text: String) -> @Sendable (TalkEvent.Kind) -> Bool {
        { if case .speakingStarted(text, _) = $0 { true } else { false } }
    }

    @Test func `allow once resolves exactly the approval read out, never one that arrived meanwhile`() async throws {
        let asked = try await Self.asked()
        #expect(await asked.rig.session.ask(Self.second, answers: asked.answers))
        try await Self.opened(asked)
        await asked.rig.listener.utterance("allow once")
        #expect(await asked.rig.log.waitFor(Self.said("Allowed once.")))
        #expect(await asked.answers.resolved == ["ap-1 allow-once"])
        #expect(await asked.rig.agent.sent.isEmpty, "an answer is no turn")
        // The one that waited is asked next, and nothing is decided for it without its own answer.
        #expect(await asked.rig.log.waitFor(Self.said(ApprovalPrompt.question(for: Self.second))))
        #expect(await asked.answers.resolved == ["ap-1 allow-once"])
        await asked.rig.session.stop()
        #expect(await asked.answers.leftPending == ["ap-2"], "Talk off leaves the unanswered one pending")
    }

    @Test func `deny denies, and the loop listens again`() async throws {
        let asked = try await Self.asked()
        try await Self.opened(asked)
        await asked.rig.listener.utterance("deny")
        #expect(await asked.rig.log.waitFor(Self.said("Denied.")))
        #expect(await asked.answers.resolved == ["ap-1 deny"])
        #expect(await asked.rig.log.waitFor { if case .stateChanged(.speaking, .listening, "approval done") = $0 { true } else { false } })
        await asked.rig.session.stop()
    }

    @Test func `silence leaves it pending with a notification, and nothing is decided`() async throws {
        let asked = try await Self.asked()
        try await Self.opened(asked)
        try #require(await asked.clock.waitForSleep(endingIn: ApprovalPrompt.answerWindow))
        asked.clock.advance(ApprovalPrompt.answerWindow)
        #expect(await asked.rig.log.waitFor(Self.said(ApprovalPrompt.leftPending)))
        #expect(await asked.answers.leftPending == ["ap-1"])
        #expect(await asked.answers.resolved.isEmpty)
        await asked.rig.session.stop()
    }

    @Test func `resolved elsewhere while the question plays: withdrawn aloud, nothing sent`() async throws {
        let asked = try await Self.asked(holdPlayback: true)
        await asked.rig.session.approvalGone(id: "ap-1")
        #expect(await asked.rig.log.waitFor { if case .speakingStopped(Self.question, false) = $0 { true } else { false } }, "the question is cut off")
        #expect(await asked.rig.log.waitFor(Self.said(ApprovalPrompt.withdrawn)))
        await asked.rig.speaker.complete()
        #expect(await asked.rig.log.waitFor { if case .stateChanged(.speaking, .listening, "approval done") = $0 { true } else { false } })
        await asked.rig.listener.utterance("allow once")
        #expect(await asked.rig.log.waitFor { if case .transcriptSent("allow once", _) = $0 { true } else { false } }, "a plain turn now")
        #expect(await asked.answers.resolved.isEmpty)
        #expect(await asked.answers.leftPending.isEmpty, "decided elsewhere: no notification")
        await asked.rig.session.stop()
    }

    @Test func `an approval arriving while the user speaks waits for their turn and its reply`() async throws {
        let clock = ManualClock()
        let rig = try await Rig(agent: .reply("It is noon."), clock: clock.clock)
        let answers = RecordingApprovalAnswers()
        await rig.listener.hear(.speechStarted(positionMs: 0))
        #expect(await rig.log.waitFor { if case .speechStarted = $0 { true } else { false } })
        #expect(await rig.session.ask(Self.approval, answers: answers))
        #expect(await rig.log.count(Self.step("asked")) == 0, "asked over the user's utterance")
        await rig.listener.hear(.partial("what time is it"))
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 1000, closedAtMs: 1700))
        await rig.listener.hear(.final(ScriptedListener.result("what time is it")))
        #expect(await rig.log.waitFor(Self.said(Self.question)))
        let events = await rig.log.events.map(\.kind)
        let reply = events.firstIndex { if case .speakingStopped("It is noon.", true) = $0 { true } else { false } }
        let question = events.firstIndex { if case .speakingStarted(Self.question, _) = $0 { true } else { false } }
        #expect(await rig.agent.sent.map(\.transcript) == ["what time is it"], "the user's words went out as their turn")
        #expect(reply != nil && question != nil && reply! < question!, "the question waited for the reply's end")
        await rig.session.stop()
    }

    @Test func `allow always is only sent after a second yes`() async throws {
        let asked = try await Self.asked()
        try await Self.opened(asked)
        await asked.rig.listener.utterance("allow always")
        #expect(await asked.rig.log.waitFor(Self.said(ApprovalPrompt.confirmAlways)))
        #expect(await asked.answers.resolved.isEmpty, "not on the first answer")
        try await Self.opened(asked, times: 2)
        await asked.rig.listener.utterance("yes")
        #expect(await asked.rig.log.waitFor(Self.said("Allowed always.")))
        #expect(await asked.answers.resolved == ["ap-1 allow-always"])
        await asked.rig.session.stop()
    }

    @Test func `the question's own echo cannot answer it`() async throws {
        let asked = try await Self.asked(holdPlayback: true)
        // The microphone hears the question's words while it plays (an echo the canceller let through).
        await asked.rig.listener.utterance("allow once")
        #expect(await asked.rig.log.waitFor { if case .transcriptIgnored("allow once", _) = $0 { true } else { false } })
        // Another stretch of it opens an utterance while the question plays and closes only after the microphone
        // opened for the answer: still the question's, not an answer.
        await asked.rig.listener.hear(.speechStarted(positionMs: 2000))
        await asked.rig.listener.hear(.partial("allow"))
        #expect(await asked.rig.log.waitFor { if case .partialTranscript("allow") = $0 { true } else { false } })
        await asked.rig.speaker.complete()
        try await Self.opened(asked)
        await asked.rig.listener.hear(.speechEnded(lastSpeechEndMs: 3000, closedAtMs: 3700))
        await asked.rig.listener.hear(.final(ScriptedListener.result("allow once")))
        #expect(await asked.rig.log.waitFor(times: 2) { if case .transcriptIgnored("allow once", _) = $0 { true } else { false } })
        try #require(await asked.clock.waitForSleep(endingIn: ApprovalPrompt.answerWindow))
        asked.clock.advance(ApprovalPrompt.answerWindow)
        #expect(await asked.rig.log.waitFor(Self.step("left pending")))
        #expect(await asked.answers.resolved.isEmpty)
        #expect(await asked.rig.agent.sent.isEmpty)
        await asked.rig.speaker.complete()
        await asked.rig.session.stop()
    }

    @Test func `a notice waits for the reply to end, and is dropped while Talk is off`() async throws {
        let rig = try await Rig(agent: .manual, listening: false)
        #expect(await !rig.session.speakNotice("The build finished."), "Talk off: dropped")
        try await rig.session.activate()
        try await rig.session.type("what time is it")
        #expect(await rig.log.waitFor { if case .transcriptSent = $0 { true } else { false } })
        await rig.agent.write(.partial("It is noon. Any", replaced: false))
        #expect(await rig.log.waitFor(Self.said("It is noon.")))
        #expect(await rig.session.speakNotice("The build finished."))
        await rig.agent.write(.final("It is noon. Anything else?", source: .events))
        #expect(await rig.log.waitFor(Self.said("The build finished.")))
        let events = await rig.log.events.map(\.kind)
        let replyEnd = events.firstIndex { if case .speakingStopped("Anything else?", true) = $0 { true } else { false } }
        let notice = events.firstIndex { if case .speakingStarted("The build finished.", _) = $0 { true } else { false } }
        #expect(replyEnd != nil && notice != nil && replyEnd! < notice!, "the notice waited for the whole reply")
        #expect(await rig.synthesizer.synthesised.filter { $0 == "The build finished." }.count == 1)
        await rig.session.stop()
    }
}
