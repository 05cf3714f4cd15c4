import Foundation
import SessionBridge
import TalkTestSupport
import Testing

@testable import TalkSession

/// Without echo cancellation (`--aec off`) the realtime session is half duplex while the answer plays: its echo,
/// as loud as a user, neither stops nor lowers it, and the relay hears silence in its place (the provider's server
/// VAD would take the echo for the user's turn and answer it) until the echo has died away (`muteTail` after it);
/// push-to-talk stops it.
@Suite struct RealtimeHalfDuplexTests {
    static var settings: RealtimeTalkSession.Settings {
        var settings = RealtimeTalkSessionTests.promptBargeIn
        settings.echoCancelled = false
        return settings
    }

    @Test func `without echo cancellation the answer's echo at full level neither stops it, lowers it, nor reaches the relay`() async throws {
        let rig = try await RealtimeRig(settings: Self.settings, clock: ManualClock().clock)
        #expect(await rig.log.waitFor { $0 == .microphone(RealtimeTalkSession.voiceBargeInOff) }, "the start did not say so")
        #expect(await rig.speakHeard(amplitude: 0, frames: 10))   // a quiet room
        #expect(await rig.speakHeard(amplitude: 3_000, frames: 10))   // the user's question
        #expect(await rig.answering(seconds: 10))
        // The answer's echo, over three times Apple's level (0.08 of full scale), for 1 s.
        #expect(await rig.speakHeard(amplitude: 8_000, frames: 50))
        #expect(await RealtimeReplyLevelTests.relayCaughtUp(rig))
        #expect(await rig.log.count(RealtimeBargeInTests.isBargeIn) == 0, "the answer cut itself off")
        #expect(await rig.speaker.stops == 0, "the answer stopped")
        #expect(await rig.speaker.gains.isEmpty, "the answer's own echo lowered it")
        #expect(await rig.relay.appendedPeaks == [0, 0, 3_000, 3_000] + Array(repeating: 0, count: 10),
                "the relay heard the answer's echo as the user")
        await rig.session.stop()
    }

    @Test func `without echo cancellation the relay hears the microphone again once the answer's echo has died away`() async throws {
        let clock = ManualClock()
        let rig = try await RealtimeRig(settings: Self.settings, clock: clock.clock)
        #expect(await rig.answering(seconds: 0.4))
        await rig.relay.send(.audioDone(itemId: nil), turnId: "turn-1")
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .replyDone) })
        #expect(await rig.speakHeard(amplitude: 3_000, frames: 5))   // the echo's tail, just after the last sample
        clock.advance(Self.settings.bargeIn.muteTail - .milliseconds(1))
        #expect(await rig.speakHeard(amplitude: 3_000, frames: 5))
        clock.advance(.milliseconds(1))
        #expect(await rig.speakHeard(amplitude: 3_000, frames: 5))   // the user
        #expect(await rig.relay.appendedPeaks == [0, 0, 3_000])
        await rig.session.stop()
    }

    @Test func `push-to-talk stops the answer, as the voice cannot without echo cancellation, and its late audio is dropped`() async throws {
        let rig = try await RealtimeRig(settings: Self.settings, clock: ManualClock().clock)
        #expect(await rig.answering(seconds: 10, turnId: "turn-1"))
        let result = try await rig.session.pushToTalk(.start)
        #expect(!result.captureId.isEmpty && result.status == nil)
        #expect(await rig.relay.cancels == [.init(turnId: "turn-1", reason: "push-to-talk")])
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .pushToTalk) })
        #expect(await rig.speaker.stops >= 1, "the answer played on")
        let playedAtCut = await rig.speaker.played.count
        await rig.relay.sendAudio(seconds: 0.2, turnId: "turn-1")
        await rig.relay.send(.mark("after-cut"))
        #expect(await rig.log.waitFor { $0 == .relayNote("mark after-cut acknowledged") })
        #expect(await rig.speaker.played.count == playedAtCut, "audio of the cut turn was played")
        #expect(await rig.log.states == [.listening, .speaking, .listening])
        await #expect(throws: RealtimeTalkSession.pushToTalkNothingToEnd) { try await rig.session.pushToTalk(.stop) }
        await rig.session.stop()
    }

    /// The relay heard silence over the answer: its clear stops the answer but is no barge-in of the user's.
    @Test func `without echo cancellation the relay's clear stops the answer without counting as a barge-in`() async throws {
        let rig = try await RealtimeRig(settings: Self.settings, clock: ManualClock().clock)
        #expect(await rig.answering(seconds: 10, turnId: "turn-1"))
        await rig.relay.send(.clear, turnId: "turn-1")
        #expect(await rig.log.waitFor { $0 == .relayNote("output cleared") })
        #expect(await rig.log.count(RealtimeBargeInTests.isBargeIn) == 0, "counted as the user's barge-in")
        #expect(await rig.log.waitFor { if case .speakingStopped(_, completed: false) = $0 { true } else { false } })
        await rig.session.stop()
    }

    @Test func `with echo cancellation nothing is said of barge-in at start`() async throws {
        let rig = try await RealtimeRig(settings: RealtimeTalkSessionTests.promptBargeIn)
        #expect(await rig.logCaughtUp())
        #expect(await rig.log.count { if case .microphone = $0 { true } else { false } } == 0)
        await rig.session.stop()
    }
}
