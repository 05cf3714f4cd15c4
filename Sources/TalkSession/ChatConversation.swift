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
        // Pulled from the reply as the loop reads, with no buffer between: the reply keeps only its newest partial
        // (each holds the whole text so far), where a forwarding task would queue every one of them.
        return AsyncStream(unfolding: {
            var updates = reply.makeAsyncIterator()
            return await updates.next()
        })
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
