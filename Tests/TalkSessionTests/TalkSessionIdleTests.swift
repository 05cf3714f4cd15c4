import Foundation
import SessionBridge
import Testing

@testable import TalkSession

/// The idle timeout on a clock the test moves: always-listening falls back to wake-phrase mode after the timeout
/// without an interaction, says so, and a wake phrase brings it back.
@Suite struct TalkSessionIdleTests {
    static func idleRig(_ clock: ManualClock, timeout: Duration? = .seconds(30)) async throws -> Rig {
        var settings = TalkSession.Settings()
        settings.idleTimeout = timeout
        settings.wakePhrases = ["hey open claw"]
        return try await Rig(agent: .reply("Sure."), settings: settings, clock: clock.clock)
    }

    static func fellBack(_ kind: TalkEvent.Kind) -> Bool {
        if case .modeChanged(.alwaysListening?, .wakePhrase, _) = kind { true } else { false }
    }

    @Test func `after the timeout without an interaction always-listening waits for a wake phrase, and one brings it back`() async throws {
        let clock = ManualClock()
        let rig = try await Self.idleRig(clock)
        try #require(await clock.waitForSleep(endingIn: .seconds(30)))
        // Nothing on the session's clock was due: nothing can have happened because 29 s went by.
        #expect(clock.advance(.seconds(29)) == 0, "a timer ran out before the timeout")
        #expect(await rig.session.handsFree.mode == .alwaysListening, "fell back before the timeout")
        clock.advance(.seconds(1))
        #expect(await rig.log.waitFor(Self.fellBack))
        #expect(await rig.log.waitFor { if case .stateChanged(.listening, .waiting, "idle timeout") = $0 { true } else { false } })

        await rig.listener.utterance("is anyone there")
        #expect(await rig.log.waitFor { if case .transcriptIgnored("is anyone there", "no wake phrase") = $0 { true } else { false } })
        #expect(await rig.agent.sent.isEmpty)

        await rig.listener.utterance("hey open claw")
        #expect(await rig.log.waitFor { if case .modeChanged(.wakePhrase?, .alwaysListening, "wake phrase") = $0 { true } else { false } })
        #expect(await rig.session.state == .listening)
        await rig.listener.utterance("what time is it")
        #expect(await rig.log.waitFor { if case .stateChanged(.speaking, .listening, "reply done") = $0 { true } else { false } })
        await rig.listener.utterance("and the date")
        #expect(await rig.log.waitFor(times: 2) { if case .stateChanged(.speaking, .listening, "reply done") = $0 { true } else { false } })
        #expect(await rig.agent.sent.map(\.transcript) == ["what time is it", "and the date"], "always-listening again: no phrase needed")
        #expect(await rig.log.count(Self.fellBack) == 1)
        await rig.session.stop()
    }

    @Test func `speech and turns start the timeout again`() async throws {
        let clock = ManualClock()
        let rig = try await Self.idleRig(clock)
        try #require(await clock.waitForSleep(endingIn: .seconds(30)))
        clock.advance(.seconds(20))
        await rig.listener.hear(.speechStarted(positionMs: 20_000))
        try #require(await clock.waitForSleep(endingIn: .seconds(30)))
        #expect(clock.advance(.seconds(20)) == 0, "a timer armed before the speech ran out")
        #expect(await rig.session.handsFree.mode == .alwaysListening, "speech 20 s ago must hold the timeout off")
        await rig.listener.hear(.final(ScriptedListener.result("hello")))
        #expect(await rig.log.waitFor { if case .stateChanged(.speaking, .listening, "reply done") = $0 { true } else { false } })
        try #require(await clock.waitForSleep(endingIn: .seconds(30)))
        #expect(clock.advance(.seconds(29)) == 0, "a timer armed before the turn ran out")
        #expect(await rig.session.handsFree.mode == .alwaysListening, "the turn must restart the timeout")
        clock.advance(.seconds(1))
        #expect(await rig.log.waitFor(Self.fellBack))
        await rig.session.stop()
    }

    @Test func `talk.config's idleTimeoutS sets the timeout unless the flag gave one`() async throws {
        let clock = ManualClock()
        let rig = try await Self.idleRig(clock, timeout: nil)
        await rig.session.apply(TalkConfig(idleTimeoutS: 5))
        try #require(await clock.waitForSleep(endingIn: .seconds(5)))
        clock.advance(.seconds(5))
        #expect(await rig.log.waitFor(Self.fellBack))
        await rig.session.stop()

        var settings = TalkSession.Settings()
        settings.idleTimeout = .seconds(60)
        settings.idleTimeoutFixed = true
        let fixedClock = ManualClock()
        let fixed = try await Rig(agent: .reply("Sure."), settings: settings, clock: fixedClock.clock)
        await fixed.session.apply(TalkConfig(idleTimeoutS: 5))
        #expect(await fixedClock.waitForSleep(endingIn: .seconds(60)))
        #expect(fixedClock.advance(.seconds(5)) == 0, "--idle-timeout must beat talk.config: a 5 s timer ran out")
        #expect(await fixed.session.handsFree.mode == .alwaysListening)
        await fixed.session.stop()
    }
}

extension TalkSessionIdleTests {
    @Test func `a push-to-talk capture in always-listening holds the timeout off, and it runs again after`() async throws {
        let clock = ManualClock()
        let rig = try await Self.idleRig(clock)
        try #require(await clock.waitForSleep(endingIn: .seconds(30)))
        _ = await rig.session.pushToTalk(.start)
        clock.advance(.seconds(40))
        // The idle timer is done with those 40 s once it is not armed: cancelled by the capture, or fired and
        // decided (a fallback is made before the actor next awaits).
        #expect(await TalkSessionReplyLevelTests.eventually { await !rig.session.timers.isArmed(.idle) })
        #expect(await rig.session.handsFree.mode == .alwaysListening, "fell back during a capture")
        #expect(await rig.session.pushToTalk(.stop).status == .empty)
        try #require(await clock.waitForSleep(endingIn: .seconds(30)))
        clock.advance(.seconds(30))
        #expect(await rig.log.waitFor(Self.fellBack))
        await rig.session.stop()
    }
}
