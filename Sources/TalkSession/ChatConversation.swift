import SessionBridge

/// The Gateway's agent for the loop: each transcript goes out through `ChatClient` (exactly once, through its
/// outbox), and the last one's reply is kept so a barge-in can abort its run.
package actor ChatConversation: TalkConversation {
    private let client: ChatClient
    private var latest: ChatReply?

    package init(_ client: ChatClient) {
        self.client = client
    }

    package func converse(_ transcript: String, interruptedAtSeconds: Double?) async -> AsyncStream<ChatReplyUpdate> {
        let reply = await client.send(transcript, interruptedAtSeconds: interruptedAtSeconds)
        latest = reply
        let (stream, continuation) = AsyncStream.makeStream(of: ChatReplyUpdate.self)
        let forward = Task {
            for await update in reply { continuation.yield(update) }
            continuation.finish()
        }
        continuation.onTermination = { _ in forward.cancel() }
        return stream
    }

    /// `ChatClient.abort`: `chat.abort {sessionKey, runId}` while the run goes on; nothing once it has ended. The
    /// reply is picked now and the request goes out on its own, so the loop is not held for the round trip.
    package func abortReply() {
        guard let reply = latest else { return }
        latest = nil
        let client = client
        Task { await client.abort(reply) }
    }
}
