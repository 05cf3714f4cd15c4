import AudioIO
import Foundation
import SessionBridge
import TalkTestSupport
import Testing

@testable import TalkSession

/// What the daemon's control commands do to `RealtimeTalkSession` (+Control), against the reference Gateway's
/// realtime relay: pause stops the answer playing and cancels its turn, resume listens again, talk stop closes
/// the relay session and talk start opens a new one, all on one event stream.
@Suite(.serialized) struct RealtimeTalkSessionControlTests {
    @Test func `pause cuts the answer and cancels its turn, resume hears the next one, talk stop and start renew the relay session`() async throws {
        let rig = try await RealtimeTalkSessionTests.Rig.start(
            speed: 1, relay: #"{"cmd": "talk-relay", "texts": ["first", "second"], "audioPace": 0.5, "reply": "a long answer that takes a good few seconds to say out loud, and then some more"}"#)
        try await rig.speak(amplitude: 3_000, frames: 50)
        try await rig.speak(amplitude: 0, frames: 45)   // the relay ends a turn on 800 ms of silence received
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        try await Task.sleep(for: .milliseconds(300))
        try await rig.session.pause()
        #expect(await rig.session.talkState == .paused)
        let cancel = try await rig.relayLog().first { $0["kind"] == "cancel" }
        #expect(cancel?["reason"] == "paused", "the relay is told the answer stopped: \(String(describing: cancel))")
        let playedAtPause = await rig.speaker.played.count
        try await Task.sleep(for: .milliseconds(700))
        #expect(await rig.speaker.played.count == playedAtPause, "nothing plays while paused")
        await #expect(throws: Never.self) { try await rig.session.pause() }   // twice is fine

        try await rig.session.resume()
        #expect(await rig.session.talkState == .listening)
        try await rig.speak(amplitude: 3_000, frames: 50)
        try await rig.speak(amplitude: 0, frames: 45)   // the relay ends a turn on 800 ms of silence received
        #expect(await rig.log.waitFor { if case .finalTranscript("second", _, _, _, _) = $0 { true } else { false } },
                "after resume the relay hears the microphone again")

        let first = await rig.sessionId()
        await rig.session.deactivate()
        #expect(await rig.session.talkState == .idle)
        #expect(try await rig.relayLog().contains { $0["kind"] == "closed" && $0["sessionId"]?.stringValue == first }, "talk stop closes the session")
        await #expect(throws: TalkSession.ControlRefusal.talkOff) { try await rig.session.pause() }
        try await rig.session.activate()
        #expect(await rig.session.talkState == .listening)
        let created = try await rig.relayLog().filter { $0["kind"] == "created" }
        #expect(created.count == 2 && created.last?["sessionId"]?.stringValue != first, "\(created)")
        #expect(await rig.log.waitFor(times: 2) { $0 == .stateChanged(from: .idle, to: .listening, reason: "started") },
                "one event stream through talk stop and start")
        try await rig.stop()
    }
}
