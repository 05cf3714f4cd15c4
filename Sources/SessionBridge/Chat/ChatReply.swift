import Synchronization

/// The reply to one transcript, as it is written: an `AsyncSequence` of updates that ends after the
/// first terminal one (`final`, `aborted`, `failed`), so speech can start on the first words. It also
/// ends, without one, when the `ChatClient` stops. A reader that falls behind finds only the newest partial
/// text (each partial holds the whole reply so far): what waits for it is at most the ack, one partial and the end.
package struct ChatReply: AsyncSequence, Sendable {
    package typealias Element = ChatReplyUpdate
    /// The transcript's idempotency key (also its outbox entry).
    package let idempotencyKey: String
    let mailbox: Mailbox

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(mailbox: mailbox) }

    package struct AsyncIterator: AsyncIteratorProtocol {
        let mailbox: Mailbox
        package mutating func next() async -> ChatReplyUpdate? { await mailbox.next() }
    }

    /// Where the client puts a reply's updates.
    package struct Sink: Sendable {
        let mailbox: Mailbox
        package func yield(_ update: ChatReplyUpdate) { mailbox.put(update) }
        package func finish() { mailbox.finish() }
    }

    /// A reply and the sink that feeds it.
    package static func makeStream(idempotencyKey: String) -> (ChatReply, Sink) {
        let mailbox = Mailbox()
        return (ChatReply(idempotencyKey: idempotencyKey, mailbox: mailbox), Sink(mailbox: mailbox))
    }

    /// The updates not yet read, a partial replacing the unread partial before it (`replaced` if either was), and
    /// the one reader waiting for the next. One reader at a time, as for an `AsyncStream`.
    final class Mailbox: Sendable {
        private struct State {
            var waiting: [ChatReplyUpdate] = []
            var finished = false
            var cancelled = false
            var reader: CheckedContinuation<ChatReplyUpdate?, Never>?
        }
        private let state = Mutex(State())

        func put(_ update: ChatReplyUpdate) {
            let reader = state.withLock { s -> CheckedContinuation<ChatReplyUpdate?, Never>? in
                guard !s.finished else { return nil }
                if let reader = s.reader {
                    s.reader = nil
                    return reader
                }
                if case .partial(let text, let replaced) = update, case .partial(_, let before)? = s.waiting.last {
                    s.waiting[s.waiting.count - 1] = .partial(text, replaced: replaced || before)
                } else {
                    s.waiting.append(update)
                }
                return nil
            }
            reader?.resume(returning: update)
        }

        func finish() {
            let reader = state.withLock { s -> CheckedContinuation<ChatReplyUpdate?, Never>? in
                s.finished = true
                defer { s.reader = nil }
                return s.waiting.isEmpty ? s.reader : nil
            }
            reader?.resume(returning: nil)
        }

        /// The next update; nil once finished and read, or when the reading task is cancelled (as an `AsyncStream`).
        func next() async -> ChatReplyUpdate? {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (c: CheckedContinuation<ChatReplyUpdate?, Never>) in
                    let ready = state.withLock { s -> ChatReplyUpdate?? in
                        if s.cancelled { return .some(nil) }
                        if !s.waiting.isEmpty { return .some(s.waiting.removeFirst()) }
                        if s.finished { return .some(nil) }
                        s.reader = c
                        return nil
                    }
                    if let ready { c.resume(returning: ready) }
                }
            } onCancel: {
                let reader = state.withLock { s -> CheckedContinuation<ChatReplyUpdate?, Never>? in
                    s.cancelled = true
                    defer { s.reader = nil }
                    return s.reader
                }
                reader?.resume(returning: nil)
            }
        }
    }
}

/// One step of a reply.
package enum ChatReplyUpdate: Sendable, Equatable {
    /// The Gateway acknowledged the transcript (`started`, or `in_flight`/`ok` for a resend) and runs `runId`.
    case accepted(runId: String?, status: String)
    /// The reply so far. `replaced` is true when this text does not extend the previous one (a `replace`
    /// delta, or a snapshot that rewrote earlier words): what was spoken may no longer match.
    case partial(String, replaced: Bool)
    /// The whole reply, from the run's `final` event or, when no terminal event came, from `chat.history`.
    case final(String, source: Source)
    /// The run was aborted (by `abort` or by the Gateway); the text written until then.
    case aborted(String)
    case failed(ChatReplyFailure)

    package enum Source: Sendable, Equatable {
        case events
        case history
    }

    package var isTerminal: Bool {
        switch self {
        case .final, .aborted, .failed: true
        case .accepted, .partial: false
        }
    }
}

/// Why a reply ended without text to speak.
package enum ChatReplyFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The run's `error` event (`errorKind`: refusal, timeout, rate_limit, context_length, unknown).
    case agentError(kind: String?, message: String?)
    /// The Gateway refused `chat.send` itself (not retryable, e.g. a missing scope).
    case rejected(GatewayErrorShape)
    /// The transcript was older than the outbox's maximum age before the Gateway acknowledged it.
    case expired
    /// The outbox was full; this, its oldest transcript, was dropped.
    case droppedFromFullOutbox
    /// No terminal event came in time and `chat.history` had no newer assistant message either.
    case noReply

    package var description: String {
        switch self {
        case .agentError(let kind, let message):
            // Both come from the Gateway: neutralised before any log line or event shows them.
            "The agent failed (\(GatewayText.neutralized(kind ?? "unknown", limit: 64))): "
                + "\(message.map { GatewayText.neutralized($0) } ?? "no message")."
        case .rejected(let shape): "The Gateway refused the transcript: \(shape)"
        case .expired: "The transcript was not acknowledged before it grew too old to send; it was dropped."
        case .droppedFromFullOutbox: "Too many transcripts were waiting for the Gateway; the oldest was dropped."
        case .noReply: "No reply came: neither a final chat event nor a newer assistant message in the history."
        }
    }
}
