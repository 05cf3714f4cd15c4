import Foundation
import SessionBridge
import TalkTestSupport
import Testing

@testable import TalkSession

/// The relay's audio comes in chunks (upstream streams the provider's deltas as they come; the reference Gateway sends
/// 100 ms chunks at twice real time), so a loaded machine or a slow network leaves gaps longer than what is queued.
/// An empty queue is no end of the answer: it ends when the relay says its audio is done (`audioDone`) and what was
/// queued has played, or when it is cut (a clear, a barge-in). Until then the answer is still playing: the session
/// stays speaking, the reply stays lowered for a user cutting in, the microphone stays muted without echo
/// cancellation. On a manual clock, so the wait for a relay that never says so runs out only when the test says.
@Suite struct RealtimeOutputUnderrunTests {
    static let underran = TalkEvent.Kind.relayNote(RealtimeTalkSession.underranNote)
    static let noAudioDoneWait = RealtimeAnswerEnd.noAudioDoneWait

    static func isStarted(_ kind: TalkEvent.Kind) -> Bool { if case .speakingStarted = kind { true } else { false } }

    /// Waits for the session to have acted on its queue running dry: it says the output underran, or (the broken
    /// behaviour the tests catch) it ends the turn.
    static func ranDry(_ rig: RealtimeRig) async -> Bool {
        await rig.log.waitFor { $0 == Self.underran || $0 == .turnEnded(reason: .replyDone) }
    }

    @Test func `a gap in the relay's audio longer than what is queued does not end the answer`() async throws {
        let rig = try await RealtimeRig(clock: ManualClock().clock)
        await rig.relay.sendAudio(seconds: 0.2, turnId: "turn-1", itemId: "item-1")
        #expect(await rig.log.waitFor(Self.isStarted))
        #expect(await Self.ranDry(rig))
        // The late audioDone of an item cut before (upstream's response.cancelled) is not this answer's.
        await rig.relay.send(.audioDone(itemId: "item-0"))
        #expect(await RealtimeReplyLevelTests.relayCaughtUp(rig))
        #expect(await rig.log.count { $0 == .turnEnded(reason: .replyDone) } == 0, "the gap ended the answer")
        await rig.relay.sendAudio(seconds: 0.4, turnId: "turn-1", itemId: "item-1")
        await rig.relay.send(.audioDone(itemId: "item-1"), turnId: "turn-1")
        await rig.relay.send(.mark("reply-end"), turnId: "turn-1")
        #expect(await rig.log.waitFor { $0 == .relayNote("mark reply-end acknowledged") })
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .replyDone) })
        #expect(await RealtimeReplyLevelTests.relayCaughtUp(rig))
        #expect(await rig.log.count { $0 == .turnEnded(reason: .replyDone) } == 1, "one answer made more than one turn")
        #expect(await rig.log.count(Self.isStarted) == 1)
        #expect(await rig.log.states == [.listening, .speaking, .listening])
        #expect(await rig.speaker.playedSamples == 3 * 4_800)
        #expect(await rig.log.count { if case .relayNote(let note) = $0 { note.hasPrefix("output resumed after ") } else { false } } == 1)
        await rig.session.stop()
    }

    /// Without echo cancellation the relay must not hear the rest of the answer's echo as the user's turn.
    @Test func `without echo cancellation the microphone stays muted through a gap in the answer`() async throws {
        let clock = ManualClock()
        let rig = try await RealtimeRig(settings: RealtimeHalfDuplexTests.settings, clock: clock.clock)
        await rig.relay.sendAudio(seconds: 0.2, turnId: "turn-1", itemId: "item-1")
        #expect(await Self.ranDry(rig))
        clock.advance(RealtimeHalfDuplexTests.settings.bargeIn.muteTail)
        #expect(await rig.speakHeard(amplitude: 3_000, frames: 5))   // the echo of the rest of the answer, as it comes
        #expect(await rig.relay.appendedPeaks == [0], "the relay heard the answer's echo in the gap")
        await rig.session.stop()
    }

    @Test func `a reply lowered for the user stays lowered through a gap in the answer`() async throws {
        let rig = try await RealtimeRig(settings: RealtimeTalkSessionTests.promptBargeIn, clock: ManualClock().clock)
        #expect(await rig.speakHeard(amplitude: 0, frames: 10))   // the noise floor
        await rig.relay.sendAudio(seconds: 1, turnId: "turn-1", itemId: "item-1")
        #expect(await rig.log.waitFor(Self.isStarted))
        await RealtimeReplyLevelTests.soundOverAnswer(rig)
        let lowered = RealtimeReplyLevelTests.lowered
        #expect(await rig.log.waitFor(RealtimeReplyLevelTests.isLevel(Double(lowered), "sound over the reply")))
        #expect(await Self.ranDry(rig))
        #expect(await RealtimeReplyLevelTests.relayCaughtUp(rig))
        #expect(await rig.speaker.gains == [lowered], "the reply's level returned at the gap")
        await rig.session.stop()
    }

    /// The relay's provider heard the user in the gap and stopped its response.
    @Test func `a clear in a gap of the answer is the relay's barge-in`() async throws {
        let rig = try await RealtimeRig(settings: RealtimeTalkSessionTests.promptBargeIn, clock: ManualClock().clock)
        await rig.relay.sendAudio(seconds: 0.2, turnId: "turn-1", itemId: "item-1")
        #expect(await Self.ranDry(rig))
        await rig.relay.send(.clear, turnId: "turn-1")
        #expect(await rig.log.waitFor { $0 == .relayNote("output cleared") })
        #expect(await rig.log.count(RealtimeBargeInTests.isBargeIn) == 1, "the clear in the gap was no barge-in")
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .bargeIn) })
        #expect(await rig.log.count { $0 == .turnEnded(reason: .replyDone) } == 0)
        await rig.session.stop()
    }

    /// A relay that never says its audio is done (an older or broken Gateway) does not hold the answer open for good.
    @Test func `without the relay's audioDone the answer ends once the output has been dry for the wait`() async throws {
        let clock = ManualClock()
        let rig = try await RealtimeRig(clock: clock.clock)
        await rig.relay.sendAudio(seconds: 0.2, turnId: "turn-1", itemId: "item-1")
        #expect(await Self.ranDry(rig))
        #expect(await clock.waitForSleep(endingIn: Self.noAudioDoneWait), "no wait for the relay's audioDone")
        clock.advance(Self.noAudioDoneWait - .milliseconds(1))
        #expect(await RealtimeReplyLevelTests.relayCaughtUp(rig))
        #expect(await rig.log.count { $0 == .turnEnded(reason: .replyDone) } == 0, "the answer ended before the wait ran out")
        clock.advance(.milliseconds(1))
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .replyDone) })
        #expect(await rig.log.count { $0 == .relayNote(RealtimeTalkSession.noAudioDoneNote) } == 1)
        #expect(await rig.log.states == [.listening, .speaking, .listening])
        await rig.session.stop()
    }
}
