import AudioIO
import Foundation
import SessionBridge
import TalkTestSupport
import Testing

@testable import TalkSession

/// `RealtimeTalkSession` on a scripted relay: the microphone streams to it, a turn answered in audio plays with its
/// mark acknowledged after playback, tool calls are answered at most four at a time, barge-in cancels the turn and
/// drops its late audio, output that comes too fast is cut, a lost relay session is made again, and falling
/// behind is reported once. The relay itself (`TalkRelayClient`) is tested against the reference Gateway in
/// SessionBridgeTests; `RealtimeRelayEndToEndTests` runs this session against it.
@Suite struct RealtimeTalkSessionTests {
    @Test func `the microphone streams to the relay and a turn's audio plays before its mark is acknowledged`() async throws {
        let rig = try await RealtimeRig()
        #expect(await rig.speakHeard(amplitude: 3_000, frames: 50), "the microphone's audio never reached the relay")
        await rig.relay.send(.transcript(role: "user", text: "hello there", final: true))
        await rig.relay.sendAudio(seconds: 0.6, turnId: "turn-1")
        await rig.relay.send(.transcript(role: "assistant", text: "you said hello there", final: true))
        await rig.relay.send(.audioDone(itemId: nil), turnId: "turn-1")
        await rig.relay.send(.mark("reply-end"))
        #expect(await rig.log.waitFor { if case .finalTranscript("hello there", "gateway-realtime", _, _, _) = $0 { true } else { false } })
        #expect(await rig.log.waitFor { if case .replyFinal("you said hello there") = $0 { true } else { false } })
        #expect(await rig.log.waitFor { $0 == .relayNote("mark reply-end acknowledged") })
        // Acknowledged only once the audio before it had played: all of it reached the speaker first.
        #expect(await rig.speaker.playedSamples == 3 * 4_800)
        let finished = try #require(await rig.speaker.lastFinished)
        let acked = try #require(await rig.relay.acknowledged.first)
        #expect(acked.name == "reply-end")
        #expect(acked.at >= finished, "the mark was acknowledged \(finished.timeIntervalSince(acked.at)) s before playback ended")
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .replyDone) })
        #expect(await rig.log.states == [.listening, .speaking, .listening])
        await rig.session.stop()
        #expect(await rig.relay.closed == 1, "the relay session outlived the session")
        #expect(await rig.relay.stopped)
    }

    /// Each tool call is an agent run (billed) and a wait of up to 120 s: a relay asking ten at once gets four
    /// answered and six refused at once with an error result, and no task is left behind.
    @Test func `a burst of tool calls is answered four at a time, the rest refused at once`() async throws {
        let rig = try await RealtimeRig()
        await rig.relay.holdToolCalls()   // every call has arrived while the first ones are still running
        for n in 0..<10 {
            await rig.relay.send(.toolCall(callId: "call-\(n)", name: "openclaw_agent_consult", args: ["question": "time?"], itemId: nil))
        }
        #expect(await rig.eventually { await rig.relay.toolResults.count == 6 }, "the six beyond four were not refused at once")
        #expect(await rig.relay.toolCallsAnswered == (0..<4).map { "call-\($0)" })
        #expect(await rig.relay.toolResults.allSatisfy { $0.result["error"] != nil })
        #expect(await rig.session.toolCallsInFlight == 4)
        await rig.relay.releaseToolCalls()
        #expect(await rig.log.waitFor(times: 4) { $0 == .relayNote("tool call openclaw_agent_consult answered") })
        #expect(await rig.eventually { await rig.session.toolCallsInFlight == 0 })
        #expect(await rig.relay.toolResults.count == 10)
        #expect(Set(await rig.relay.toolResults.map(\.callId)).count == 10, "a call was answered twice")
        await rig.session.stop()
    }

    @Test func `speech over the reply cancels its turn and its late audio is dropped`() async throws {
        let rig = try await RealtimeRig(settings: Self.promptBargeIn)
        #expect(await rig.speakHeard(amplitude: 0, frames: 10))   // the noise floor
        #expect(await rig.answering(seconds: 4, turnId: "turn-1"))
        #expect(await rig.speakHeard(amplitude: 6_000, frames: 10))   // RMS 6000 > 0.08 of full scale
        #expect(await rig.log.waitFor { if case .bargeIn = $0 { true } else { false } })
        #expect(await rig.eventually { await rig.relay.cancels == [.init(turnId: "turn-1", reason: "barge-in")] })
        #expect(await rig.log.waitFor { $0 == .turnEnded(reason: .bargeIn) })
        let playedAtCancel = await rig.speaker.played.count
        // A late chunk of the cancelled turn, as a slow Gateway might still send it, then a mark behind it: the mark
        // is acknowledged, the chunk never played.
        await rig.relay.sendAudio(seconds: 0.2, turnId: "turn-1")
        await rig.relay.send(.mark("after-cut"))
        #expect(await rig.log.waitFor { $0 == .relayNote("mark after-cut acknowledged") })
        #expect(await rig.speaker.played.count == playedAtCancel, "audio of the cancelled turn was played")
        await rig.session.stop()
    }

    @Test func `output arriving faster than it plays is cut, never queued without bound`() async throws {
        var settings = RealtimeTalkSession.Settings()
        settings.maxQueuedMs = 600
        let rig = try await RealtimeRig(settings: settings)
        await rig.relay.sendAudio(seconds: 4, turnId: "turn-1")
        #expect(await rig.log.waitFor { $0 == .error("the relay's audio came faster than it plays; the output is cut") })
        let cut = await rig.eventually { await rig.relay.cancels == [.init(turnId: "turn-1", reason: "playback-overflow")] }
        let cancels = await rig.relay.cancels
        #expect(cut, "cancels: \(cancels)")
        // The rest of the cut turn, still arriving, is dropped: nothing more plays, nothing more is cut.
        await rig.relay.send(.mark("after-cut"))
        #expect(await rig.log.waitFor { $0 == .relayNote("mark after-cut acknowledged") })
        #expect(await rig.relay.cancels.count == 1)
        let played = await rig.speaker.playedSeconds
        #expect(played < 1.5, "\(played) s played of a reply cut at 0.6 s queued")
        await rig.session.stop()
    }

    @Test func `a relay session that is gone is made again and the microphone's audio goes on`() async throws {
        let rig = try await RealtimeRig()
        #expect(await rig.speakHeard(amplitude: 0, frames: 5))
        await rig.relay.script([.noSession])   // as after a reconnect
        await rig.mic.push(amplitude: 0, count: 5)
        #expect(await rig.eventually { await rig.relay.opened == 2 }, "no new relay session was made")
        #expect(await rig.speakHeard(amplitude: 3_000, frames: 10), "the audio did not go on to the new session")
        #expect(await rig.log.count { if case .error = $0 { true } else { false } } == 0)
        await rig.session.stop()
    }

    @Test func `audio the relay cannot take is reported once while it falls behind, and again after it caught up`() async throws {
        let rig = try await RealtimeRig()
        let behind = TalkEvent.Kind.microphone("input fell behind: audio dropped while the relay catches up")
        await rig.relay.script(Array(repeating: .fellBehind, count: 4) + [.sent(requests: 1), .fellBehind])
        await rig.mic.push(amplitude: 0, count: 5 * 7)   // seven appends: the six scripted, then one that goes out
        #expect(await rig.eventually { await rig.relay.appendedBytes == 3_200 })
        #expect(await rig.relay.appendOutcomes.isEmpty)
        #expect(await rig.logCaughtUp())
        #expect(await rig.log.count { $0 == behind } == 2)
        await rig.session.stop()
    }

    /// Barge-in from the first frame of the answer on (the 250 ms the answer plays before speech may cut it are
    /// a guard of their own, not what these tests are about).
    static var promptBargeIn: RealtimeTalkSession.Settings {
        var settings = RealtimeTalkSession.Settings()
        settings.bargeInAfterOutput = .zero
        return settings
    }
}
