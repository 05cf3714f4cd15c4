import Foundation
import SessionBridge
import Testing

@testable import TalkSession

/// The reply goes quieter while the user may be cutting in: from the moment an utterance opens over it until
/// that utterance interrupts it or closes. Events are handled in order, so once a later event is seen, the
/// session has done what the earlier one asked of the speaker.
@Suite struct TalkSessionReplyLevelTests {
    static let lowered = TalkSession.Settings().bargeIn.lowering.gain!

    /// Waits until the session has handled every event heard before this partial.
    static func settle(_ rig: Rig, marker: String) async {
        await rig.listener.hear(.partial(marker))
        #expect(await rig.log.waitFor { if case .partialTranscript(marker) = $0 { true } else { false } })
    }

    @Test func `an utterance over the reply lowers it until it closes, then the reply plays on at full level`() async throws {
        let rig = try await TalkSessionBargeInTests.speaking()
        #expect(await rig.speaker.levels == [1])
        await rig.listener.hear(.speechStarted(positionMs: 5000))
        await Self.settle(rig, marker: "sunny")
        #expect(await rig.speaker.gains == [Self.lowered])
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 5600, closedAtMs: 6300))
        await Self.settle(rig, marker: "warm")
        #expect(await rig.speaker.gains == [Self.lowered, 1])
        #expect(await rig.speaker.stops == 0)
        await rig.session.stop()
    }

    @Test func `a barge-in stops the lowered reply and the next reply starts at full level`() async throws {
        let rig = try await TalkSessionBargeInTests.speaking()
        try await TalkSessionBargeInTests.speakLoudly(into: rig)
        await rig.listener.hear(.speechStarted(positionMs: 5000))
        await rig.listener.hear(.partial("stop right there"))
        #expect(await rig.log.waitFor(TalkSessionBargeInTests.isBargeIn))
        #expect(await rig.speaker.gains == [Self.lowered])
        await rig.agent.set(.reply("Okay."))
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 6000, closedAtMs: 6700))
        await rig.listener.hear(.final(ScriptedListener.result("stop right there")))
        #expect(await rig.log.waitFor { if case .speakingStarted("Okay.", _) = $0 { true } else { false } })
        #expect(await rig.speaker.levels == [1, 1])
        await rig.session.stop()
    }

    @Test func `speech while nothing plays, or with barge-in off, leaves the level alone`() async throws {
        let quiet = try await Rig(agent: .reply("Fine."))
        await quiet.listener.hear(.speechStarted(positionMs: 0))
        await Self.settle(quiet, marker: "hello")
        #expect(await quiet.speaker.gains.isEmpty)
        await quiet.session.stop()

        var settings = TalkSession.Settings()
        settings.bargeIn.forcedOff = true
        let muted = try await TalkSessionBargeInTests.speaking(settings)
        try await TalkSessionBargeInTests.speakLoudly(into: muted)
        await muted.listener.hear(.speechStarted(positionMs: 5000))
        await Self.settle(muted, marker: "sunny")
        #expect(await muted.speaker.gains.isEmpty)
        await muted.session.stop()
    }

    /// Polls (bounded) until `condition` holds.
    static func eventually(_ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }

    static func speakingOnManualClock() async throws -> (Rig, ManualClock) {
        let clock = ManualClock()
        let rig = try await Rig(agent: .reply(TalkSessionBargeInTests.reply), holdPlayback: true, clock: clock.clock)
        await rig.listener.utterance("how is the weather")
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        return (rig, clock)
    }

    @Test func `sound over the reply lowers it before any utterance opens, and the level returns if none does`() async throws {
        let (rig, clock) = try await Self.speakingOnManualClock()
        try await TalkSessionBargeInTests.speakLoudly(into: rig)
        #expect(await Self.eventually { await rig.speaker.gains == [Self.lowered] })
        #expect(await clock.waitForSleep(endingIn: TalkSession.Settings().bargeIn.lowering.onsetHold))
        clock.advance(TalkSession.Settings().bargeIn.lowering.onsetHold)
        let raised = await Self.eventually { await rig.speaker.gains == [Self.lowered, 1] }
        let gains = await rig.speaker.gains
        #expect(raised, "gains: \(gains)")
        #expect(await rig.log.waitFor { if case .replyLevel(1, "no utterance followed the sound") = $0 { true } else { false } })
        #expect(await rig.log.count { if case .replyLevel(_, "sound over the reply") = $0 { true } else { false } } == 1)
        await rig.session.stop()
    }

    @Test func `an utterance that opens after the sound keeps the reply lowered past the onset's wait, until it closes`() async throws {
        let (rig, clock) = try await Self.speakingOnManualClock()
        try await TalkSessionBargeInTests.speakLoudly(into: rig)
        #expect(await Self.eventually { await rig.speaker.gains == [Self.lowered] })
        #expect(await clock.waitForSleep(endingIn: TalkSession.Settings().bargeIn.lowering.onsetHold))
        await rig.listener.hear(.speechStarted(positionMs: 5000))
        await Self.settle(rig, marker: "sunny")
        clock.advance(TalkSession.Settings().bargeIn.lowering.onsetHold)
        // The onset's timer is not armed once the machine has dealt with it: cancelled when the utterance opened, or
        // fired and decided on (the machine's decision and its replyLevel event come before any await).
        #expect(await Self.eventually { await !rig.session.timers.isArmed(.onsetHold) })
        await Self.settle(rig, marker: "warm")
        #expect(await rig.log.count { if case .replyLevel(1, _) = $0 { true } else { false } } == 0)
        #expect(await rig.speaker.gains == [Self.lowered], "lowered once, and not raised while the utterance is open")
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 5600, closedAtMs: 6300))
        #expect(await Self.eventually { await rig.speaker.gains == [Self.lowered, 1] })
        await rig.session.stop()
    }

    /// Frames over the reply as the canceller marks them (`explained`: the share its echo explains), and waits until
    /// the listener has read them.
    static func push(_ rig: Rig, amplitude: Int16, count: Int, explained: Float) async {
        let before = await rig.listener.peaks.count
        await rig.microphone.push(amplitude: amplitude, count: count, echoExplained: explained)
        #expect(await TalkSessionBargeInTests.heard(rig, frames: before + count))
    }

    /// Issue 22: the recogniser's speech start came up to 1.4 s after the user's onset, and the level returned over
    /// their words at the hold's 800 ms.
    @Test func `while the microphone hears the user's own sound the hold goes on, and the level returns once it stops`() async throws {
        let (rig, clock) = try await Self.speakingOnManualClock()
        let hold = TalkSession.Settings().bargeIn.lowering.onsetHold
        await Self.push(rig, amplitude: 0, count: 10, explained: 1)
        await Self.push(rig, amplitude: 8000, count: 10, explained: 0.2)  // the user's own sound, the echo explains little
        #expect(await Self.eventually { await rig.speaker.gains == [Self.lowered] })
        #expect(await clock.waitForSleep(endingIn: hold))
        for _ in 0..<3 {  // still speaking as the hold runs out: syllables (a steady tone would raise the noise floor to it)
            await Self.push(rig, amplitude: 0, count: 2, explained: 1)
            await Self.push(rig, amplitude: 8000, count: 8, explained: 0.2)
        }
        clock.advance(hold)
        #expect(await clock.waitForSleep(endingIn: hold), "the hold goes on")
        #expect(await rig.speaker.gains == [Self.lowered])
        await Self.push(rig, amplitude: 0, count: 20, explained: 1)  // they stopped, and no utterance opened
        clock.advance(hold)
        #expect(await rig.log.waitFor { if case .replyLevel(1, "no utterance followed the sound within 1600 ms") = $0 { true } else { false } })
        #expect(await Self.eventually { await rig.speaker.gains == [Self.lowered, 1] })
        await rig.session.stop()
    }

    @Test func `sound the reply's echo explains does not hold the reply lowered past the onset's wait`() async throws {
        let (rig, clock) = try await Self.speakingOnManualClock()
        let hold = TalkSession.Settings().bargeIn.lowering.onsetHold
        await Self.push(rig, amplitude: 0, count: 10, explained: 1)
        await Self.push(rig, amplitude: 8000, count: 40, explained: 0.9)
        #expect(await Self.eventually { await rig.speaker.gains == [Self.lowered] })
        #expect(await clock.waitForSleep(endingIn: hold))
        clock.advance(hold)
        #expect(await rig.log.waitFor { if case .replyLevel(1, "no utterance followed the sound") = $0 { true } else { false } })
        #expect(await Self.eventually { await rig.speaker.gains == [Self.lowered, 1] })
        await rig.session.stop()
    }
}
