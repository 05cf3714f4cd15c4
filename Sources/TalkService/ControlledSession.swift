import Foundation

/// What the service plane needs of a Talk session. The Talk loop implements it; the service never
/// imports the loop, so the control socket, status and systemd plumbing build and test without audio.
package protocol ControlledSession: Sendable {
    /// Closes the microphone stream (nothing records while paused); `resume` reopens it.
    func pause() async throws
    func resume() async throws
    /// Drops the Gateway connection and connects again now, skipping any backoff.
    func reconnect() async throws
    func talkStart() async throws
    func talkStop() async throws
    /// Speaks `text` to the Gateway as if it had been said (a typed turn).
    func say(_ text: String) async throws
    func pushToTalk(_ action: PushToTalkAction) async throws
    /// What the status shows, read fresh.
    func snapshot() async -> SessionSnapshot
    /// Things that happened (transcript, reply, state change); each one refreshes the status.
    var events: AsyncStream<SessionEvent> { get }
    /// Shows (and, while Talk is on, speaks) a notification as the node's `system.notify` would: `notify`'s local test.
    /// The result is what the node would answer; a session that shows none throws `ControlError` "unsupported". No
    /// default: a direct call on a conformer would reach it instead of a synchronous method of the conformer's own.
    func notify(title: String, body: String, priority: String?) async throws -> ControlJSON
}

package enum PushToTalkAction: String, Sendable, CaseIterable {
    case start, stop, once
}

package struct SessionEvent: Sendable, Equatable {
    package var kind: String
    package var detail: [String: String]
    package init(kind: String, detail: [String: String] = [:]) {
        self.kind = kind
        self.detail = detail
    }
}

/// The session's state as the status shows it. No secrets: nothing here may hold a token or key.
package struct SessionSnapshot: Sendable, Equatable {
    package enum VoicePhase: String, Sendable { case listening, thinking, speaking, paused }
    package enum ConnectionPhase: String, Sendable { case disconnected, connecting, reconnecting, connected }

    package var talkActive = false
    package var talkMode: String?
    package var sessionKey: String?
    package var voice: VoicePhase?
    package var gatewayURL: String?
    package var connection: ConnectionPhase = .disconnected
    package var protocolVersion: Int?
    package var serverVersion: String?
    package var nextRetryAt: Date?
    package var audioSource: String?
    package var audioSink: String?
    /// "opus", "pcm16", "g711_ulaw" or nil.
    package var uplink: String?
    package var uplinkBytesPerSecond: Int?
    /// "webrtc", "pulse" or "off".
    package var echoCancellation: String?
    /// A tool the agent is running (shown over voice).
    package var runningTool: String?
    /// Something that needs the user (an approval, a refused pairing): shown over everything.
    package var attention: String?
    package var lastTranscript: String?
    package var lastReply: String?
    package var error: String?

    package init() {}
}
