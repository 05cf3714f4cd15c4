import SessionBridge

/// What `RelayTranscription` talks to: the Gateway's transcription relay. `TalkRelayClient` is the real one (one relay
/// session at a time, appends in capture order, at most 4 unanswered); the source's tests use a fake that records
/// what audio reached it, as `RealtimeRelay` lets the realtime loop's tests script theirs.
package protocol TranscriptionRelay: Sendable {
    /// The relay session's events (one reader), from the start of following until `stop()`.
    func events() async -> AsyncStream<TalkRelayEvent>
    /// The live relay session's input contract, opening a session when there is none usable (`checkCatalog`: asking
    /// `talk.catalog` first whether the relay is ready).
    func openTranscriptionInput(checkCatalog: Bool) async throws -> RealtimeRelayInput
    /// Sends `bytes` of encoded microphone audio (`audioMs` long) to the session in use.
    func append(_ bytes: [UInt8], audioMs: Int) async -> TalkRelayClient.AppendOutcome
    /// Closes the relay session in use.
    func close() async
    /// Stops following events: the event stream ends.
    func stop() async
}

extension TalkRelayClient: TranscriptionRelay {
    package func openTranscriptionInput(checkCatalog: Bool) async throws -> RealtimeRelayInput {
        if currentSession == nil, checkCatalog { _ = try await availability() }
        return try await openInput()
    }
}
