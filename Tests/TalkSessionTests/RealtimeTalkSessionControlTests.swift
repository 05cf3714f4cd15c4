import AudioIO
import Foundation
import SessionBridge
import TalkTestSupport
import Testing

@testable import TalkSession

/// What the daemon's control commands do to `RealtimeTalkSession` (+Control), on a scripted relay: pause stops the
/// answer playing and cancels its turn, resume listens again, talk stop closes the relay session and talk start
/// opens a new one, all on one event stream.
@Suite struct RealtimeTalkSessionControlTests {
    @Test func `pause cuts the answer and cancels its turn, resume hears the next one, talk stop and start renew the relay session`() async throws {
        let rig = try await RealtimeRig()
        #expect(await rig.answering(seconds: 10, turnId: "turn-1"))
        try await rig.session.pause()
        #expect(await rig.session.talkState == .paused)
        #expect(await rig.relay.cancels == [.init(turnId: "turn-1", reason: "paused")], "the relay is told the answer stopped")
        #expect(await !rig.mic.isOpen, "the microphone stayed open while paused")
        let playedAtPause = await rig.speaker.played.count
        await rig.relay.sendAudio(seconds: 0.4, turnId: "turn-2")
        await rig.relay.send(.mark("while-paused"))
        #expect(await rig.log.waitFor { $0 == .relayNote("mark while-paused acknowledged") })
        #expect(await rig.speaker.played.count == playedAtPause, "something played while paused")
        await #expect(throws: Never.self) { try await rig.session.pause() }   // twice is fine

        try await rig.session.resume()
        #expect(await rig.session.talkState == .listening)
        #expect(await rig.speakHeard(amplitude: 3_000, frames: 10), "after resume the relay hears the microphone again")

        await rig.session.deactivate()
        #expect(await rig.session.talkState == .idle)
        #expect(await rig.relay.closed == 1, "talk stop closes the relay session")
        await #expect(throws: TalkSession.ControlRefusal.talkOff) { try await rig.session.pause() }
        try await rig.session.activate()
        #expect(await rig.session.talkState == .listening)
        #expect(await rig.relay.opened == 2, "talk start opens a new relay session")
        #expect(await rig.speakHeard(amplitude: 3_000, frames: 10))
        #expect(await rig.log.waitFor(times: 2) { $0 == .stateChanged(from: .idle, to: .listening, reason: "started") },
                "one event stream through talk stop and start")
        await rig.session.stop()
    }

    /// The status names the uplink from the `relayUplink` event and Talk's state from `stateChanged`: an uplink
    /// announced before the session listens showed, to a status read in between, audio going out with Talk off.
    @Test func `the uplink is announced only while Talk is on, at the start and after talk stop and start`() async throws {
        let rig = try await RealtimeRig()
        await rig.session.deactivate()
        try await rig.session.activate()
        #expect(await rig.logCaughtUp())
        var state = TalkState.idle
        var announced: [TalkState] = []
        for event in await rig.log.events {
            switch event.kind {
            case .stateChanged(_, let to, _): state = to
            case .relayUplink: announced.append(state)
            default: break
            }
        }
        #expect(announced == [.listening, .listening], "the state when each uplink was announced")
        await rig.session.stop()
    }
}
