import Foundation
import SessionBridge
import TalkTestSupport
import Testing

@testable import TalkSession

/// What upstream's realtime relay sends of the user (openclaw/openclaw src/gateway/talk-realtime-relay.ts): a
/// `clear` when its provider's server VAD hears them start over the answer (the provider has stopped the response
/// itself), and their words as the provider's deltas, each to append to the ones before, until the final.
@Suite struct RealtimeRelayUserTests {
    static func isBargeIn(_ kind: TalkEvent.Kind) -> Bool { if case .bargeIn = kind { true } else { false } }
    static func isSpeakingStarted(_ kind: TalkEvent.Kind) -> Bool { if case .speakingStarted = kind { true } else { false } }

    @Test func `a clear while the answer plays is the relay's barge-in, and the next answer under the same turn id plays`() async throws {
        let rig = try await RealtimeBargeInTests.answering()
        await rig.relay.send(.clear, turnId: "turn-1")
        #expect(await rig.log.waitFor(Self.isBargeIn), "the relay's barge-in was not one")
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .bargeIn) })
        #expect(await rig.log.waitFor { if case .speakingStopped(_, completed: false) = $0 { true } else { false } })
        #expect(await rig.log.count { $0 == .turnEnded(reason: .replyDone) } == 0, "the cut answer counted as played to its end")
        // Upstream keeps one turn id until a client cancels: the answer to what the user said comes under it.
        await rig.relay.sendAudio(seconds: 1, turnId: "turn-1")
        #expect(await rig.log.waitFor(times: 2, Self.isSpeakingStarted), "the next answer was dropped")
        // The provider stopped its response itself: nothing to cancel.
        #expect(await rig.relay.cancels == [])
        await rig.session.stop()
    }

    /// The provider stops its response on the user's speech start, but the audio it had sent is still on its way.
    @Test func `after the relay's clear the cut answer's late audio does not play, the next answer's does`() async throws {
        let rig = try await RealtimeRig(settings: RealtimeTalkSessionTests.promptBargeIn)
        await rig.relay.sendAudio(seconds: 10, turnId: "turn-1", itemId: "item-1")
        #expect(await rig.log.waitFor(Self.isSpeakingStarted))
        await rig.relay.send(.clear, turnId: "turn-1")
        #expect(await rig.log.waitFor(Self.isBargeIn))
        let played = await rig.speaker.playedSamples
        await rig.relay.sendAudio(seconds: 0.4, turnId: "turn-1", itemId: "item-1")
        #expect(await rig.logCaughtUp())
        #expect(await rig.log.count(Self.isSpeakingStarted) == 1, "the cut answer played again")
        #expect(await rig.speaker.playedSamples == played)
        await rig.relay.sendAudio(seconds: 1, turnId: "turn-1", itemId: "item-2")
        #expect(await rig.log.waitFor(times: 2, Self.isSpeakingStarted), "the next answer was dropped")
        await rig.session.stop()
    }

    @Test func `the relay's clear after the session's own barge-in is not a second one`() async throws {
        let rig = try await RealtimeBargeInTests.answering()
        #expect(await rig.speakHeard(amplitude: 6_000, frames: 15))   // no words from the relay: the level rule
        #expect(await rig.log.waitFor(Self.isBargeIn))
        await rig.relay.send(.clear, turnId: "turn-1")   // the answer to the session's cancelOutput
        #expect(await rig.logCaughtUp())
        #expect(await rig.log.count(Self.isBargeIn) == 1)
        await rig.session.stop()
    }

    @Test func `the user's words come as deltas and are judged together`() async throws {
        let rig = try await RealtimeBargeInTests.answering()
        await rig.relay.send(.transcript(role: "assistant", text: "a long answer that takes a good few seconds", final: false))
        await rig.relay.send(.transcript(role: "user", text: "go", final: false))
        #expect(await rig.log.waitFor { $0 == .partialTranscript("go") })
        #expect(await rig.speakHeard(amplitude: 6_000, frames: 15))
        await rig.relay.send(.transcript(role: "user", text: " on", final: false))
        // Two letters of new words are not enough (the text guard's three); "go on" is.
        #expect(await rig.log.waitFor { $0 == .partialTranscript("go on") }, "the deltas were not put together")
        #expect(await rig.log.count(Self.isBargeIn) == 0, "two letters cut the answer off")
        #expect(await rig.speakHeard(amplitude: 6_000, frames: 15))
        #expect(await rig.log.waitFor(Self.isBargeIn))
        await rig.session.stop()
    }

    @Test func `the user's final ends their words: the next utterance starts anew`() async throws {
        let rig = try await RealtimeRig(settings: RealtimeTalkSessionTests.promptBargeIn)
        await rig.relay.send(.transcript(role: "user", text: "what", final: false))
        await rig.relay.send(.transcript(role: "user", text: " time", final: false))
        await rig.relay.send(.transcript(role: "user", text: "what time", final: true))
        await rig.relay.send(.transcript(role: "user", text: " thanks", final: false))
        #expect(await rig.log.waitFor { $0 == .partialTranscript("thanks") })
        let partials = await rig.log.events.compactMap { event -> String? in
            if case .partialTranscript(let text) = event.kind { text } else { nil }
        }
        #expect(partials == ["what", "what time", "thanks"])
        await rig.session.stop()
    }

    @Test func `the user's words end with their final: the answer they asked for is not cut off by them`() async throws {
        let rig = try await RealtimeRig(settings: RealtimeTalkSessionTests.promptBargeIn)
        #expect(await rig.speakHeard(amplitude: 0, frames: 10))
        await rig.relay.send(.transcript(role: "user", text: "go", final: false))
        await rig.relay.send(.transcript(role: "user", text: " forward", final: false))
        await rig.relay.send(.transcript(role: "user", text: "go forward", final: true))
        #expect(await rig.answering(seconds: 10))
        // Sound over the answer within 1.5 s of their last words (the answer's echo, a cough): no new words.
        #expect(await rig.speakHeard(amplitude: 6_000, frames: 15))
        #expect(await RealtimeReplyLevelTests.relayCaughtUp(rig))
        #expect(await rig.log.count(Self.isBargeIn) == 0, "the words of the question cut its answer off")
        await rig.session.stop()
    }
}
