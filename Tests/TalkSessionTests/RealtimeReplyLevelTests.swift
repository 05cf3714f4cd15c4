import Foundation
import SessionBridge
import TalkTestSupport
import Testing

@testable import TalkSession

/// The realtime answer goes quieter while the user may be cutting in, as the native reply does
/// (`TalkSessionReplyLevelTests`): sound over it lowers it by `BargeInPolicy.Lowering`, the level returns if the relay
/// hears no utterance within the onset hold, and a barge-in cuts the lowered answer. On a manual clock, so the hold
/// runs out when the test says.
@Suite struct RealtimeReplyLevelTests {
    static let lowering = BargeInPolicy().lowering
    static let lowered = lowering.gain!

    static func isLevel(_ gain: Double, _ reason: String) -> @Sendable (TalkEvent.Kind) -> Bool {
        { $0 == .replyLevel(gain: gain, reason: reason) }
    }

    /// A rig whose answer is playing over a silent room, on `clock`.
    static func answering(_ clock: ManualClock) async throws -> RealtimeRig {
        let rig = try await RealtimeRig(settings: RealtimeTalkSessionTests.promptBargeIn, clock: clock.clock)
        #expect(await rig.speakHeard(amplitude: 0, frames: 10))
        #expect(await rig.answering(seconds: 10))
        return rig
    }

    /// Returns once the session has handled the relay's events sent before now. The marker is an assistant's final:
    /// a user's words (`RealtimeRig.logCaughtUp`) would be new words over the sound, a barge-in.
    static func relayCaughtUp(_ rig: RealtimeRig) async -> Bool {
        let marker = "marker \(UUID().uuidString.prefix(8))"
        await rig.relay.send(.transcript(role: "assistant", text: marker, final: true))
        return await rig.log.waitFor { $0 == .replyFinal(marker) }
    }

    /// Sound 20 dB over the silent room's floor and under the level rule (RMS 1000 < 0.08 of full scale): it may be
    /// the user, never a barge-in on its own.
    static func soundOverAnswer(_ rig: RealtimeRig) async {
        #expect(await rig.speakHeard(amplitude: 1_000, frames: 5))
    }

    @Test func `sound over the answer lowers it, and the level returns when no utterance follows within the hold`() async throws {
        let clock = ManualClock()
        let rig = try await Self.answering(clock)
        await Self.soundOverAnswer(rig)
        #expect(await rig.log.waitFor(Self.isLevel(Double(Self.lowered), "sound over the reply")))
        #expect(await rig.eventually { await rig.speaker.gains == [Self.lowered] })
        #expect(await clock.waitForSleep(endingIn: Self.lowering.onsetHold))
        #expect(clock.advance(Self.lowering.onsetHold - .milliseconds(1)) == 0, "the level returned before the hold ran out")
        clock.advance(.milliseconds(1))
        #expect(await rig.log.waitFor(Self.isLevel(1, "no utterance followed the sound")))
        #expect(await rig.eventually { await rig.speaker.gains == [Self.lowered, 1] })
        #expect(await rig.log.count(RealtimeBargeInTests.isBargeIn) == 0)
        #expect(await rig.speaker.stops == 0, "the answer stopped")
        await rig.session.stop()
    }

    /// A user who began as one of the answer's sentences began: the echo stages muted their first word whole (nothing
    /// audible comes out of them until the next word), but the canceller's linear stage kept it, and the answer's
    /// reference around the echo's lag does not explain it. Lowered at their second word, the answer reached the
    /// microphone lowered 800 ms after they began, and the relay heard them only then.
    @Test func `a first word the echo stages muted lowers the answer at that word`() async throws {
        let clock = ManualClock()
        let rig = try await Self.answering(clock)
        // The answer's echo: muted by the stages, its linear stage's leak the answer's own.
        #expect(await rig.speakHeard(amplitude: 0, frames: 10, explained: 1, closely: 1, linear: 2_000))
        #expect(await Self.relayCaughtUp(rig))
        #expect(await rig.speaker.gains.isEmpty, "the answer's own leak lowered it")
        // The user's first word: muted by the stages, theirs in the linear stage.
        #expect(await rig.speakHeard(amplitude: 0, frames: 3, explained: 1, closely: 0.1, linear: 2_000))
        #expect(await rig.log.waitFor(Self.isLevel(Double(Self.lowered), "sound over the reply")))
        #expect(await rig.eventually { await rig.speaker.gains == [Self.lowered] })
        await rig.session.stop()
    }

    @Test func `an utterance the relay hears keeps the answer lowered past the hold until the user's final`() async throws {
        let clock = ManualClock()
        let rig = try await Self.answering(clock)
        await Self.soundOverAnswer(rig)
        #expect(await clock.waitForSleep(endingIn: Self.lowering.onsetHold))
        await rig.relay.send(.speechStart)
        #expect(await Self.relayCaughtUp(rig))
        // The user still speaking (the microphone loud) when the hold runs out.
        #expect(await rig.speakHeard(amplitude: 1_000, frames: 5))
        clock.advance(Self.lowering.onsetHold)
        #expect(await clock.waitForSleep(endingIn: Self.lowering.onsetHold), "the hold was not taken up again")
        #expect(await Self.relayCaughtUp(rig))
        #expect(await rig.speaker.gains == [Self.lowered], "the level returned while the user spoke")
        await rig.relay.send(.transcript(role: "user", text: "is it", final: true))
        #expect(await rig.log.waitFor(Self.isLevel(1, "the utterance closed")))
        #expect(await rig.eventually { await rig.speaker.gains == [Self.lowered, 1] })
        await rig.session.stop()
    }

    @Test func `a barge-in cuts the lowered answer and its hold`() async throws {
        let clock = ManualClock()
        let rig = try await Self.answering(clock)
        await Self.soundOverAnswer(rig)
        #expect(await rig.eventually { await rig.speaker.gains == [Self.lowered] })
        #expect(await clock.waitForSleep(endingIn: Self.lowering.onsetHold))
        #expect(await rig.speakHeard(amplitude: 6_000, frames: 5))
        #expect(await rig.log.waitFor(RealtimeBargeInTests.isBargeIn))
        #expect(await rig.log.waitFor(Self.isLevel(1, "the reply was cut off")))
        #expect(await rig.speaker.stops >= 1, "the lowered answer played on")
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .bargeIn) })
        #expect(clock.pending.isEmpty, "the hold outlived the answer")
        #expect(await rig.speaker.gains == [Self.lowered], "the level was set after the cut (stopping the speaker returns it)")
        await rig.session.stop()
    }

    @Test func `with barge-in off, or no lowering, sound over the answer leaves its level alone`() async throws {
        for change in [{ (settings: inout RealtimeTalkSession.Settings) in settings.bargeIn.forcedOff = true },
                       { (settings: inout RealtimeTalkSession.Settings) in settings.bargeIn.lowering.decibels = nil }] {
            var settings = RealtimeTalkSessionTests.promptBargeIn
            change(&settings)
            let rig = try await RealtimeRig(settings: settings, clock: ManualClock().clock)
            #expect(await rig.speakHeard(amplitude: 0, frames: 10))
            #expect(await rig.answering(seconds: 10))
            await Self.soundOverAnswer(rig)
            await rig.relay.send(.speechStart)
            #expect(await Self.relayCaughtUp(rig))
            #expect(await rig.speaker.gains.isEmpty)
            #expect(await rig.log.count { if case .replyLevel = $0 { true } else { false } } == 0)
            await rig.session.stop()
        }
    }
}
