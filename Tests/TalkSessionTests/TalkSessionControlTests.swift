import Foundation
import SessionBridge
import Testing

@testable import TalkSession

/// The daemon's control commands on the loop (fakes): pause closes the microphone and stops the reply, resume
/// reopens it; talk stop / talk start turn Talk off and on without ending the session; a typed turn.
@Suite struct TalkSessionControlTests {
    @Test func `pause stops the reply and closes the microphone; resume reopens it`() async throws {
        let rig = try await Rig(agent: .reply("A long answer."), holdPlayback: true)
        await rig.listener.utterance("tell me")
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        try await rig.session.pause()
        #expect(await rig.session.state == .paused)
        #expect(await rig.log.waitFor { if case .speakingStopped(_, false) = $0 { true } else { false } }, "the reply is cut")
        #expect(await !rig.microphone.isOpen, "nothing is read while paused: the stream is closed")
        let heard = await rig.listener.peaks.count
        await #expect(throws: TalkSession.ControlRefusal.paused) { try await rig.session.type("hello") }

        try await rig.session.resume()
        #expect(await rig.session.state == .listening)
        await rig.microphone.push(amplitude: 3000, count: 10)
        #expect(await rig.eventually { await rig.listener.peaks.count >= heard + 10 }, "the microphone is read again")
        await rig.session.stop()
    }

    @Test func `talk stop turns Talk off and tells the Gateway; talk start and a typed turn bring it back`() async throws {
        let rig = try await Rig(agent: .reply("Sure."))
        await rig.session.deactivate()
        #expect(await rig.session.state == .idle)
        #expect(await rig.phases.phases == ["listening", "disabled"])
        await #expect(throws: TalkSession.ControlRefusal.talkOff) { try await rig.session.type("hello") }
        await #expect(throws: TalkSession.ControlRefusal.talkOff) { try await rig.session.pause() }

        try await rig.session.activate()
        #expect(await rig.session.state == .listening)
        try await rig.session.type("remind me at noon")
        #expect(await rig.log.waitFor { if case .speakingStopped("Sure.", true) = $0 { true } else { false } })
        #expect(await rig.agent.sent.map(\.transcript) == ["remind me at noon"])
        #expect(await rig.log.waitFor { if case .stateChanged(.speaking, .listening, _) = $0 { true } else { false } })
        await rig.session.stop()
        #expect(await rig.phases.phases == ["listening", "disabled", "listening", "thinking", "speaking", "listening", "disabled"])
    }

    /// `say` while the reply plays is a new request: the sentence playing stops (no abort: the user did not cut in
    /// by voice), the rest of that reply is never played, and the typed turn's reply is spoken.
    @Test func `a typed turn while the reply plays cuts it off and its reply is spoken`() async throws {
        let rig = try await Rig(agent: .reply("A long answer. With a second sentence."), holdPlayback: true)
        await rig.listener.utterance("tell me")
        #expect(await rig.log.waitFor { if case .speakingStarted("A long answer.", _) = $0 { true } else { false } })
        await rig.agent.set(.reply("Sure."))
        try await rig.session.type("never mind")
        #expect(await rig.log.waitFor { if case .speakingStopped("A long answer.", false) = $0 { true } else { false } }, "the reply is cut")
        #expect(await rig.log.waitFor { if case .speakingStarted("Sure.", _) = $0 { true } else { false } })
        #expect(await rig.speaker.stops >= 1)
        #expect(await rig.agent.sent.map(\.transcript) == ["tell me", "never mind"])
        #expect(await rig.log.count { if case .speakingStarted("With a second sentence.", _) = $0 { true } else { false } } == 0)
        await rig.session.stop()
    }

    @Test func `a session started with Talk off opens no microphone and announces nothing until activated`() async throws {
        let rig = try await Rig(agent: .reply("Hi."), listening: false)
        #expect(await rig.session.state == .idle)
        #expect(await !rig.microphone.isOpen, "Talk off: no microphone stream was opened")
        #expect(await rig.phases.phases.isEmpty)
        try await rig.session.activate()
        #expect(await rig.eventually { await rig.phases.phases == ["listening"] })
        await rig.session.stop()
    }
}

extension Rig {
    /// Polls until `check` holds. The bound (as `EventLog.waitFor`'s) only catches a loop that never gets there, not
    /// a loaded machine: suites beside this one may hold both of the cooperative pool's threads for seconds.
    func eventually(_ check: @Sendable () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if await check() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await check()
    }
}
