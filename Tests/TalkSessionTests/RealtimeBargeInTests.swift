import Foundation
import SessionBridge
import TalkTestSupport
import Testing

@testable import TalkSession

/// Barge-in over the realtime relay's answer, with the native loop's guards: when the relay transcribes the
/// user, only new words cut the answer off (its own words, transcribed back from the echo, do not), and quiet
/// sound never does.
@Suite(.serialized) struct RealtimeBargeInTests {
    typealias Rig = RealtimeTalkSessionTests.Rig
    static let relay = #"{"cmd": "talk-relay", "texts": ["x"], "audioPace": 0.5, "reply": "a long answer that takes a good few seconds to say out loud, and then some more"}"#

    static func isBargeIn(_ kind: TalkEvent.Kind) -> Bool { if case .bargeIn = kind { true } else { false } }

    /// A rig whose answer is playing.
    static func answering() async throws -> Rig {
        let rig = try await Rig.start(speed: 1, relay: relay)
        try await rig.speak(amplitude: 3_000, frames: 50)
        try await rig.speak(amplitude: 0, frames: 45)   // the relay ends a turn on 800 ms of silence received
        #expect(await rig.log.waitFor { if case .speakingStarted = $0 { true } else { false } })
        try await Task.sleep(for: .milliseconds(400))
        return rig
    }

    /// A non-final `transcript` event of the relay session, as the Gateway sends it. The session handles the relay's
    /// events in order and shows a user's partial words: a user's transcript returns once the session has it.
    static func transcript(_ rig: Rig, role: String, text: String) async throws {
        let payload = JSONValue.object(["relaySessionId": .string(await rig.sessionId() ?? ""), "type": "transcript", "role": .string(role),
                                        "text": .string(text), "final": false])
        let frame = JSONValue.object(["type": "event", "event": "talk.event", "payload": payload]).jsonText
        _ = try await offPool { try rig.gateway.control(JSONValue.object(["cmd": "send-raw", "text": .string(frame)]).jsonText) }
        if role == "user" { #expect(await rig.log.waitFor { $0 == .partialTranscript(text) }, "the session never had '\(text)'") }
    }

    @Test func `the answer's own words transcribed back do not cut it off, new words do`() async throws {
        let rig = try await Self.answering()
        try await Self.transcript(rig, role: "assistant", text: "a long answer that takes a good few seconds")
        try await Self.transcript(rig, role: "user", text: "a long answer")   // (after the assistant's: in order)
        #expect(try await rig.speakHeard(amplitude: 6_000, frames: 15))
        // Events come out in order: once the next words are in the log, a barge-in on those frames would be too.
        try await Self.transcript(rig, role: "user", text: "wait stop")
        #expect(await rig.log.count(Self.isBargeIn) == 0, "the answer's echo cut it off")
        try await rig.speak(amplitude: 6_000, frames: 15)
        #expect(await rig.log.waitFor(Self.isBargeIn))
        try await rig.stop()
    }

    @Test func `new words over quiet sound do not cut the answer off (the energy guard)`() async throws {
        let rig = try await Self.answering()
        try await Self.transcript(rig, role: "user", text: "wait stop")
        #expect(try await rig.speakHeard(amplitude: 100, frames: 15))
        try await Self.transcript(rig, role: "user", text: "wait stop now")   // the log has caught up with those frames
        #expect(await rig.log.count(Self.isBargeIn) == 0, "quiet sound cut the answer off")
        try await rig.stop()
    }
}
