import Foundation
import SessionBridge
import Testing

@testable import TalkSession

/// Push-to-talk on fakes: the microphone is held between captures, `stop` sends what the capture heard, `cancel`
/// drops it, `once` ends with the first utterance, and a capture opened over a reply cuts it off.
@Suite struct TalkSessionPushToTalkTests {
    static func pttRig(agent: ScriptedAgent.Script = .reply("Done."), holdPlayback: Bool = false) async throws -> Rig {
        var settings = TalkSession.Settings()
        settings.mode = .pushToTalk
        return try await Rig(agent: agent, holdPlayback: holdPlayback, settings: settings)
    }

    /// Loud frames into the microphone; the loudest sample the listener got of them.
    static func loudest(after rig: Rig) async throws -> Int {
        let before = await rig.listener.peaks.count
        await rig.microphone.push(amplitude: 8000, count: 10)
        let deadline = ContinuousClock.now + .seconds(10)
        while await rig.listener.peaks.count < before + 10, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return await rig.listener.peaks.dropFirst(before).max() ?? -1
    }

    static func restedAfterReply(_ kind: TalkEvent.Kind) -> Bool {
        if case .stateChanged(_, .waiting, "reply done") = kind { true } else { false }
    }

    @Test func `the microphone is held until start, and stop sends what was said`() async throws {
        let rig = try await Self.pttRig()
        #expect(await rig.session.state == .waiting)
        #expect(try await Self.loudest(after: rig) == 0, "the listener heard sound before talk.ptt.start")
        let started = await rig.session.pushToTalk(.start)
        #expect(!started.captureId.isEmpty && started.status == nil)
        #expect(await rig.session.state == .listening)
        #expect(try await Self.loudest(after: rig) == 8000)
        await rig.listener.utterance("turn on the lights")
        await rig.listener.utterance("in the kitchen")
        #expect(await rig.log.waitFor(times: 2) { if case .finalTranscript = $0 { true } else { false } })
        #expect(await rig.agent.sent.isEmpty, "nothing goes out before stop")
        let stopped = await rig.session.pushToTalk(.stop)
        #expect(stopped == PushToTalkResult(captureId: started.captureId, transcript: "turn on the lights in the kitchen", status: .queued))
        #expect(await rig.log.waitFor(Self.restedAfterReply))
        #expect(await rig.agent.sent.map(\.transcript) == ["turn on the lights in the kitchen"])
        #expect(try await Self.loudest(after: rig) == 0, "the microphone must be held again after stop")
        // Speech between captures is not sent (nor heard).
        await rig.listener.utterance("private words")
        #expect(await rig.log.waitFor { if case .transcriptIgnored("private words", _) = $0 { true } else { false } })
        #expect(await rig.agent.sent.count == 1)
        #expect(await rig.session.pushToTalk(.stop).status == .idle)
        await rig.session.stop()
        #expect(await rig.phases.phases.prefix(4) == ["idle", "listening", "thinking", "speaking"])
        #expect(await rig.phases.phases.suffix(2) == ["idle", "disabled"])
    }

    @Test func `stop during an open utterance waits for its final`() async throws {
        let rig = try await Self.pttRig()
        let started = await rig.session.pushToTalk(.start)
        await rig.listener.hear(.speechStarted(positionMs: 100))
        #expect(await rig.log.waitFor { if case .speechStarted = $0 { true } else { false } })
        let stop = Task { await rig.session.pushToTalk(.stop) }
        // The stop has been taken and waits for the utterance's final; nothing has gone out meanwhile.
        #expect(await TalkSessionReplyLevelTests.eventually { await rig.session.captureWaiters[started.captureId]?.count == 1 })
        #expect(await rig.agent.sent.isEmpty)
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 900, closedAtMs: 1600))
        await rig.listener.hear(.final(ScriptedListener.result("lock the door")))
        #expect(await stop.value == PushToTalkResult(captureId: started.captureId, transcript: "lock the door", status: .queued))
        #expect(await rig.log.waitFor(Self.restedAfterReply))
        await rig.session.stop()
    }

    @Test func `cancel drops the capture, and a capture that heard nothing is empty`() async throws {
        let rig = try await Self.pttRig()
        let first = await rig.session.pushToTalk(.start)
        await rig.listener.utterance("never mind this")
        #expect(await rig.log.waitFor { if case .finalTranscript = $0 { true } else { false } })
        #expect(await rig.session.pushToTalk(.cancel) == PushToTalkResult(captureId: first.captureId, status: .cancelled))
        #expect(await rig.session.state == .waiting)
        let second = await rig.session.pushToTalk(.start)
        #expect(second.captureId != first.captureId)
        #expect(await rig.session.pushToTalk(.stop) == PushToTalkResult(captureId: second.captureId, status: .empty))
        #expect(await rig.session.pushToTalk(.cancel).status == .idle)
        #expect(await rig.agent.sent.isEmpty)
        await rig.session.stop()
    }

    @Test func `once ends with the first utterance and sends it; once during a capture is busy`() async throws {
        let rig = try await Self.pttRig()
        let once = Task { await rig.session.pushToTalk(.once) }
        #expect(await rig.log.waitFor { if case .stateChanged(.waiting, .listening, "push-to-talk") = $0 { true } else { false } })
        #expect(await rig.session.pushToTalk(.once).status == .busy)
        await rig.listener.utterance("what time is it")
        let result = await once.value
        #expect(result.transcript == "what time is it" && result.status == .queued)
        #expect(await rig.log.waitFor(Self.restedAfterReply))
        #expect(await rig.agent.sent.map(\.transcript) == ["what time is it"])
        await rig.session.stop()
    }

    @Test func `once stops by itself at its limit`() async throws {
        let clock = ManualClock()
        var settings = TalkSession.Settings()
        settings.mode = .pushToTalk
        settings.pushToTalkOnceLimit = .seconds(12)
        let rig = try await Rig(agent: .reply("Done."), settings: settings, clock: clock.clock)
        let once = Task { await rig.session.pushToTalk(.once) }
        try #require(await clock.waitForSleep(endingIn: .seconds(12)))
        clock.advance(.seconds(12))
        #expect(await once.value.status == .empty)
        #expect(await rig.session.state == .waiting)
        await rig.session.stop()
    }

    @Test func `a capture nothing stops ends as a stop at its limit and sends what it heard`() async throws {
        let clock = ManualClock()
        var settings = TalkSession.Settings()
        settings.mode = .pushToTalk
        settings.pushToTalkCaptureLimit = .seconds(60)
        let rig = try await Rig(agent: .reply("Done."), settings: settings, clock: clock.clock)
        let started = await rig.session.pushToTalk(.start)
        await rig.listener.utterance("turn on the lights")
        #expect(await rig.log.waitFor { if case .finalTranscript = $0 { true } else { false } })
        try #require(await clock.waitForSleep(endingIn: .seconds(60)), "the capture has no limit")
        clock.advance(.seconds(60))
        #expect(await rig.log.waitFor(Self.restedAfterReply))
        #expect(await rig.agent.sent.map(\.transcript) == ["turn on the lights"])
        let id = started.captureId
        #expect(await rig.log.count { if case .pushToTalk("stop", id, "queued", "turn on the lights") = $0 { true } else { false } } == 1)
        #expect(try await Self.loudest(after: rig) == 0, "the microphone must be held again after the limit")
        #expect(await rig.session.pushToTalk(.stop).status == .idle)
        await rig.session.stop()
    }

    @Test func `start over a reply cuts it off and aborts the agent's run`() async throws {
        let rig = try await Rig(agent: .reply(TalkSessionBargeInTests.reply), holdPlayback: true)
        await rig.listener.utterance("how is the weather")
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        let started = await rig.session.pushToTalk(.start)
        #expect(started.status == nil)
        #expect(await rig.log.waitFor { if case .speakingStopped(_, false) = $0 { true } else { false } })
        #expect(await rig.speaker.stops >= 1)
        let deadline = ContinuousClock.now + .seconds(10)
        while await rig.agent.aborts == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await rig.agent.aborts == 1)
        #expect(await rig.session.state == .listening)
        await rig.session.stop()
    }
}
