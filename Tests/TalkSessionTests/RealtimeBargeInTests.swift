import Foundation
import SessionBridge
import TalkTestSupport
import Testing

@testable import TalkSession

/// Barge-in over the realtime relay's answer, with the native loop's guards: when the relay transcribes the
/// user, only new words cut the answer off (its own words, transcribed back from the echo, do not), and quiet
/// sound never does; the detection latency runs from the start of the user's sound.
@Suite struct RealtimeBargeInTests {
    static func isBargeIn(_ kind: TalkEvent.Kind) -> Bool { if case .bargeIn = kind { true } else { false } }

    /// A rig whose answer is playing, over a silent room.
    static func answering() async throws -> RealtimeRig {
        let rig = try await RealtimeRig(settings: RealtimeTalkSessionTests.promptBargeIn)
        #expect(await rig.speakHeard(amplitude: 0, frames: 10))
        #expect(await rig.answering(seconds: 10))
        return rig
    }

    /// A non-final `transcript` event of the relay session: for the user, a delta (upstream forwards the provider's),
    /// which returns once the session has it (it shows the user's words so far, which end with it).
    static func transcript(_ rig: RealtimeRig, role: String, text: String) async {
        await rig.relay.send(.transcript(role: role, text: text, final: false))
        guard role == "user" else { return }
        let words = text.trimmingCharacters(in: .whitespaces)
        #expect(await rig.log.waitFor { if case .partialTranscript(let shown) = $0 { shown.hasSuffix(words) } else { false } },
                "the session never had '\(text)'")
    }

    @Test func `the answer's own words transcribed back do not cut it off, new words do`() async throws {
        let rig = try await Self.answering()
        await Self.transcript(rig, role: "assistant", text: "a long answer that takes a good few seconds")
        await Self.transcript(rig, role: "user", text: "a long answer")   // (after the assistant's: in order)
        #expect(await rig.speakHeard(amplitude: 6_000, frames: 15))
        // Events come out in order: once the next words are in the log, a barge-in on those frames would be too.
        await Self.transcript(rig, role: "user", text: " wait stop")
        #expect(await rig.log.count(Self.isBargeIn) == 0, "the answer's echo cut it off")
        #expect(await rig.speakHeard(amplitude: 6_000, frames: 15))
        #expect(await rig.log.waitFor(Self.isBargeIn))
        await rig.session.stop()
    }

    /// The relay's provider decides by its own VAD whether the user speaks, and cancels the answer when it hears them.
    @Test func `the canceller's leak of the answer reaches the relay as silence, the user over it as heard`() async throws {
        let rig = try await Self.answering()
        let before = await rig.relay.appendedPeaks.count
        // The leak at a loud word's onset (300 ms at RMS 3 000), which the answer's audio explains, then its quiet
        // rest, as long as the gate holds frames back: the leak has gone out, as silence.
        #expect(await rig.speakHeard(amplitude: 3_000, frames: 15, explained: 1))
        #expect(await rig.speakHeard(amplitude: 40, frames: RealtimeUplinkGate.heldFrames, explained: 1))
        #expect(await rig.relay.appendedPeaks.count - before == 3)
        #expect(await rig.relay.appendedPeaks.dropFirst(before).allSatisfy { $0 == 0 }, "the relay heard the answer's leak")
        // The user: 80 ms the answer seems to explain, then their own sound.
        #expect(await rig.speakHeard(amplitude: 5_000, frames: 4, explained: 1))
        #expect(await rig.speakHeard(amplitude: 5_000, frames: 6, explained: 0.1))
        #expect(await rig.eventually { await rig.relay.appendedPeaks.dropFirst(before).contains(5_000) }, "the relay never heard the user")
        await rig.session.stop()
    }

    /// A user a metre from speakers at full level speaks under the answer's echo: the answer never explains less than
    /// half of their frames, but lowered for them it leaves the canceller's output theirs, and the relay hears them.
    @Test func `a user quieter than the answer's echo reaches the relay once the answer is lowered for them`() async throws {
        let clock = ManualClock()   // the onset hold does not run out
        let rig = try await RealtimeReplyLevelTests.answering(clock)
        let before = await rig.relay.appendedPeaks.count
        let quiet = RealtimeUplinkGateTests.quietUser
        #expect(await rig.speakHeard(amplitude: quiet.amplitude, frames: 5, explained: quiet.explained))
        #expect(await rig.log.waitFor(RealtimeReplyLevelTests.isLevel(Double(RealtimeReplyLevelTests.lowered), "sound over the reply")))
        #expect(await rig.speakHeard(amplitude: quiet.amplitude, frames: RealtimeUplinkGate.loweredReachFrames + 10, explained: quiet.explained))
        #expect(await rig.eventually { await rig.relay.appendedPeaks.dropFirst(before).contains(Int(quiet.amplitude)) },
                "the relay never heard the user")
        await rig.session.stop()
    }

    @Test func `new words over quiet sound do not cut the answer off (the energy guard)`() async throws {
        let rig = try await Self.answering()
        await Self.transcript(rig, role: "user", text: "wait stop")
        #expect(await rig.speakHeard(amplitude: 100, frames: 15))
        await Self.transcript(rig, role: "user", text: " now")   // the log has caught up with those frames
        #expect(await rig.log.count(Self.isBargeIn) == 0, "quiet sound cut the answer off")
        await rig.session.stop()
    }

    @Test func `a barge-in's detection latency runs from the first loud frame of the user's sound, not of a knock before it`() async throws {
        let clock = ManualClock()
        let rig = try await RealtimeReplyLevelTests.answering(clock)
        await Self.transcript(rig, role: "assistant", text: "a long answer that takes a good few seconds")
        await Self.transcript(rig, role: "user", text: "a long answer")   // the relay transcribes the user
        // A knock, then 400 ms of quiet (over the energy guard's 300 ms): not the start of what the user says next.
        #expect(await rig.speakHeard(amplitude: 6_000, frames: 5))
        #expect(await rig.speakHeard(amplitude: 0, frames: 20))
        clock.advance(.seconds(1))
        #expect(await rig.speakHeard(amplitude: 6_000, frames: 5))   // the user starts
        #expect(await rig.log.count(Self.isBargeIn) == 0, "the answer's own words cut it off")
        clock.advance(.milliseconds(420))
        await Self.transcript(rig, role: "user", text: " wait stop")
        #expect(await rig.speakHeard(amplitude: 6_000, frames: 5))
        #expect(await rig.log.waitFor(Self.isBargeIn))
        let latencies = await rig.log.events.compactMap { event -> Double? in
            if case .bargeIn(_, let latency, _) = event.kind { latency } else { nil }
        }
        #expect(latencies == [420])
        await rig.session.stop()
    }

    @Test func `with a relay that sends no words, the user's own sound under Apple's level stops the answer, timed from it`() async throws {
        let clock = ManualClock()
        let rig = try await RealtimeReplyLevelTests.answering(clock)
        // The answer's echo, loud (over 0.08 of full scale) and explained by its audio, then a short pause.
        #expect(await rig.speakHeard(amplitude: 3_000, frames: 10, explained: 1))
        #expect(await rig.speakHeard(amplitude: 0, frames: 5))
        #expect(await RealtimeReplyLevelTests.relayCaughtUp(rig))   // (a user's words would be text to judge)
        #expect(await rig.log.count(Self.isBargeIn) == 0, "the answer's echo cut it off")
        clock.advance(.seconds(1))
        // The user, at RMS 2 000 (under Apple's level), unexplained: 100 ms of it, then 100 ms more, 100 ms later.
        #expect(await rig.speakHeard(amplitude: 2_000, frames: 5, explained: 0.1))
        #expect(await RealtimeReplyLevelTests.relayCaughtUp(rig))   // (a user's words would be text to judge)
        #expect(await rig.log.count(Self.isBargeIn) == 0, "100 ms of sound cut the answer off")
        clock.advance(.milliseconds(100))
        #expect(await rig.speakHeard(amplitude: 2_000, frames: 5, explained: 0.1))
        #expect(await rig.log.waitFor(Self.isBargeIn))
        let latencies = await rig.log.events.compactMap { event -> Double? in
            if case .bargeIn(_, let latency, _) = event.kind { latency } else { nil }
        }
        #expect(latencies == [100])
        await rig.session.stop()
    }
}
