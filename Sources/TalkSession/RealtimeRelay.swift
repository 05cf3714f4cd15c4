import Foundation
import SessionBridge

/// What `RealtimeTalkSession` talks to: the Gateway's realtime relay. `TalkRelayClient` is the real one (one relay
/// session at a time, at most 4 appends in flight, stale audio of cancelled turns dropped); the loop's tests use a
/// scripted relay, as `TalkSession.Dependencies` lets the native loop's tests script the agent.
package protocol RealtimeRelay: Sendable {
    /// The relay session's events (one reader), from the start of following until `stop()`.
    func events() async -> AsyncStream<TalkRelayEvent>
    /// The live relay session's input contract, opening a session when there is none usable.
    func openInput() async throws -> RealtimeRelayInput
    /// Sends `bytes` of encoded microphone audio (`audioMs` long) to the session in use.
    func append(_ bytes: [UInt8], audioMs: Int) async -> TalkRelayClient.AppendOutcome
    /// The output stops (barge-in, pause, overflow): the rest of `turnId`'s audio is not wanted.
    func cancelOutput(turnId: String?, reason: String) async throws
    /// All the audio before mark `name` has played.
    func acknowledgeMark(_ name: String) async throws
    func submitToolResult(callId: String, result: JSONValue) async throws
    /// Answers a tool call (the agent's run, or the control tool's steer) and hands the result to the relay.
    func answerToolCall(callId: String, name: String, args: JSONValue, timeout: Duration) async -> Result<String, TalkRelayError>
    /// Closes the relay session in use (`talk stop`, the end of the session).
    func close() async
    /// Stops following events: the event stream ends.
    func stop() async
}

/// A relay session's input contract, as its create answer gave it.
package struct RealtimeRelayInput: Sendable, Equatable {
    package var sessionId: String
    package var encoding: String
    package var sampleRateHz: Int

    package init(sessionId: String, encoding: String, sampleRateHz: Int) {
        self.sessionId = sessionId
        self.encoding = encoding
        self.sampleRateHz = sampleRateHz
    }
}

extension TalkRelayClient: RealtimeRelay {
    package func openInput() async throws -> RealtimeRelayInput {
        let session = try await ensureSession()
        return RealtimeRelayInput(sessionId: session.id, encoding: session.inputEncoding, sampleRateHz: session.inputSampleRateHz)
    }
}
