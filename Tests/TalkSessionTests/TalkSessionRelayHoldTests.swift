import Foundation
import SessionBridge
import Testing

@testable import TalkSession

/// The relay's hold end to end on fakes: the gate's sound onset, with its place in the capture stream, reaches the
/// machine, and the transcript source hears of an utterance over the reply as held, released from that onset when
/// it cuts the reply off or when the gate hears it go on past the reply's end and its echo's tail (while the user
/// still speaks), and dropped without ever streaming when it does neither.
@Suite struct TalkSessionRelayHoldTests {
    static let reply = TalkSessionBargeInTests.reply

    static func speaking(_ relay: RecordingTranscriptSource) async throws -> Rig {
        let rig = try await Rig(agent: .reply(reply), holdPlayback: true, transcriptSource: relay)
        await rig.listener.utterance("how is the weather")
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        await rig.agent.set(.reply("Okay."))
        return rig
    }

    @Test func `an utterance over the reply goes to the relay with the barge-in, from the gate's onset`() async throws {
        let relay = RecordingTranscriptSource(words: "stop right there")
        let rig = try await Self.speaking(relay)
        let opening = await relay.calls
        // Ten quiet frames, then the user: the gate's onset is the first loud frame, 200 ms into the stream.
        try await TalkSessionBargeInTests.speakLoudly(into: rig)
        #expect(await rig.log.waitFor { if case .replyLevel(_, "sound over the reply") = $0 { true } else { false } })
        await rig.listener.hear(.speechStarted(positionMs: 100))
        await rig.listener.hear(.partial("stop right there"))
        #expect(await rig.log.waitFor(TalkSessionBargeInTests.isBargeIn))
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 900, closedAtMs: 1600))
        await rig.listener.hear(.final(ScriptedListener.result("stop right there")))
        #expect(await rig.log.waitFor { if case .transcriptSent("stop right there", _?) = $0 { true } else { false } })
        #expect(await relay.calls.dropFirst(opening.count) == ["held", "released from 200", "ended", "transcript"])
        await rig.session.stop()
    }

    @Test func `an utterance over the reply that does not cut it off never streams`() async throws {
        let relay = RecordingTranscriptSource(words: "and the weather")
        let rig = try await Self.speaking(relay)
        let opening = await relay.calls
        await rig.listener.hear(.speechStarted(positionMs: 100))
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 900, closedAtMs: 1600))
        await rig.listener.hear(.final(ScriptedListener.result("the weather")))
        #expect(await rig.log.waitFor { if case .transcriptIgnored = $0 { true } else { false } })
        #expect(await relay.calls.dropFirst(opening.count) == ["held", "discarded"])
        #expect(await rig.agent.sent.count == 1)
        await rig.session.stop()
    }

    /// How the reply ends: every sentence played, or the Gateway aborted the run (what was queued plays out).
    enum Ending: String, CaseIterable, Sendable { case played, aborted }

    /// A session whose reply (held) plays until `ending` is carried out.
    static func replying(_ relay: RecordingTranscriptSource, _ ending: Ending) async throws -> Rig {
        guard ending == .aborted else { return try await speaking(relay) }
        let rig = try await Rig(agent: .manual, holdPlayback: true, transcriptSource: relay)
        await rig.listener.utterance("how is the weather")
        #expect(await rig.log.waitFor { if case .transcriptSent = $0 { true } else { false } })
        await rig.agent.write(.partial(reply, replaced: false))
        await rig.agent.write(.aborted(reply))
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        await rig.agent.set(.reply("Okay."))
        return rig
    }

    /// The reply's sentence plays to its end, and the turn is over.
    static func end(_ rig: Rig) async {
        await rig.speaker.complete()
        #expect(await rig.log.waitFor { if case .turnEnded(.replyDone) = $0 { true } else { false } })
    }

    /// The user speaks on for `frames` frames: words of 160 ms with 40 ms of quiet between (the gate's floor follows
    /// the quiet; a tone held without a pause would become its floor), heard by the listener.
    static func speakOn(_ rig: Rig, frames: Int) async {
        let before = await rig.listener.peaks.count
        for _ in 0..<(frames / 10) {
            await rig.microphone.push(amplitude: 8000, count: 8)
            await rig.microphone.push(amplitude: 0, count: 2)
        }
        #expect(await TalkSessionBargeInTests.heard(rig, frames: before + frames))
    }

    /// The user's sound opens an utterance at 200 ms over the reply: the source is told it is held.
    static func openHeld(_ rig: Rig, _ relay: RecordingTranscriptSource, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await TalkSessionBargeInTests.speakLoudly(into: rig)
        await rig.listener.hear(.speechStarted(positionMs: 200))
        #expect(await told(relay, "held"), sourceLocation: sourceLocation)
    }

    /// The user speaks on past the reply's echo and a partial reaches 1.4 s: the held utterance is released from
    /// their onset (200 ms), and nothing else was told the source since `opening`.
    static func speakPastEchoReleased(
        _ rig: Rig, _ relay: RecordingTranscriptSource, after opening: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await speakOn(rig, frames: 50)
        await rig.listener.hear(.partial("go forward ten", endMs: 1400))
        let released = await told(relay, "released from 200")
        let calls = await relay.calls.dropFirst(opening.count)
        #expect(released, "the utterance is still held", sourceLocation: sourceLocation)
        #expect(Array(calls) == ["held", "released from 200"], sourceLocation: sourceLocation)
    }

    /// Waits (at most 30 s: a bound that only catches a source never told) for the source to have been told `call`.
    static func told(_ relay: RecordingTranscriptSource, _ call: String) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if await relay.calls.contains(call) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// The user begins over the reply's last moments (the gate's onset at 200 ms) without cutting it off, and speaks
    /// on past its end (the stream at 400 ms) and its echo's tail (1.1 s): a partial whose audio reaches 1.4 s has the
    /// gate find their loud frames there, and the source is told to release the utterance from their onset before
    /// anything says it has ended; its end and the relay's words follow as for any utterance.
    @Test(arguments: Ending.allCases)
    func `speech that goes on past the reply's echo is released while the user speaks`(ending: Ending) async throws {
        let relay = RecordingTranscriptSource(words: "go forward ten meters")
        let rig = try await Self.replying(relay, ending)
        let opening = await relay.calls
        try await Self.openHeld(rig, relay)
        await Self.end(rig)
        await Self.speakPastEchoReleased(rig, relay, after: opening)
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 1400, closedAtMs: 2100))
        await rig.listener.hear(.final(ScriptedListener.result("go forward ten")))
        // The first turn went out in the relay's words too.
        #expect(await rig.log.waitFor(times: 2) { if case .transcriptSent("go forward ten meters", nil) = $0 { true } else { false } })
        let after = await relay.calls.dropFirst(opening.count)
        #expect(after == ["held", "released from 200", "ended", "transcript"])
        await rig.session.stop()
    }

    /// The reply's echo opens an utterance and dies within its tail; the endpointer keeps the utterance open past
    /// the tail for its silence window, and a partial comes there: the gate heard nothing loud past the tail, so it
    /// is never released, and none of it streams.
    @Test func `an echo that ends within the tail is not released by a partial past it`() async throws {
        let relay = RecordingTranscriptSource(words: "breeze")
        let rig = try await Self.speaking(relay)
        let opening = await relay.calls
        try await Self.openHeld(rig, relay)
        await Self.end(rig)
        await rig.microphone.push(amplitude: 8000, count: 20)
        await rig.microphone.push(amplitude: 0, count: 30)
        #expect(await TalkSessionBargeInTests.heard(rig, frames: 70))
        await rig.listener.hear(.partial("breeze", endMs: 1400))
        await rig.listener.hear(.speechEnded(lastSpeechEndMs: 800, closedAtMs: 1500))
        await rig.listener.hear(.final(ScriptedListener.result("breeze")))
        #expect(await rig.log.waitFor { if case .transcriptIgnored = $0 { true } else { false } })
        #expect(await relay.calls.dropFirst(opening.count) == ["held", "discarded"])
        #expect(await rig.agent.sent.count == 1)
        await rig.session.stop()
    }

    /// Push-to-talk cuts the reply off while a held utterance is open: the session reads where the capture stream
    /// stood once the reply stopped (400 ms), and the user's speech past that and its echo's tail releases it.
    @Test func `a reply cut by push-to-talk releases the held utterance once speech goes on past its echo`() async throws {
        let relay = RecordingTranscriptSource(words: "go forward ten meters")
        let rig = try await Self.speaking(relay)
        let opening = await relay.calls
        try await Self.openHeld(rig, relay)
        let capture = await rig.session.pushToTalk(.start)
        #expect(capture.status == nil)
        #expect(await rig.log.waitFor { if case .turnEnded(.pushToTalk) = $0 { true } else { false } })
        await Self.speakPastEchoReleased(rig, relay, after: opening)
        await rig.session.stop()
    }
}
