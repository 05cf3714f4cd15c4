/// The text of one run's reply, built from its `chat` events: free of I/O so it can be tested by
/// feeding payloads. Events are taken in the run's `seq` order: a duplicate or an older `seq` (a replay,
/// a late copy) is dropped, and nothing counts after a terminal event.
package struct ChatReplyState: Sendable, Equatable {
    package private(set) var text = ""
    package private(set) var finished = false
    private var lastSeq: Int64?

    package init() {}

    /// The update `payload` (already known to be this run's) gives, or nil when it changes nothing.
    package mutating func apply(_ payload: ChatEventPayload) -> ChatReplyUpdate? {
        guard !finished else { return nil }
        if let lastSeq, payload.seq <= lastSeq { return nil }
        lastSeq = payload.seq
        switch payload.state {
        case .delta:
            let before = text
            if let snapshot = payload.messageText {
                // The cumulative snapshot is the Gateway's own view: it also repairs deltas we missed.
                text = snapshot
            } else if let delta = payload.deltaText {
                text = payload.replace ? delta : Self.capped(text + delta)
            } else {
                return nil
            }
            if text == before { return nil }
            return .partial(text, replaced: !text.hasPrefix(before))
        case .final:
            finished = true
            if let whole = payload.messageText { text = whole }
            return .final(text, source: .events)
        case .aborted:
            finished = true
            if let partial = payload.messageText { text = partial }
            return .aborted(text)
        case .error:
            finished = true
            return .failed(.agentError(kind: payload.errorKind, message: payload.errorMessage ?? payload.messageText))
        }
    }

    /// The reply's first `ChatEventPayload.maxTextBytes` bytes: each delta is capped on its own, their sum here, so
    /// a run of deltas cannot make us hold (and later synthesise) more than one reply can be. The start is kept: it is
    /// what is spoken first.
    static func capped(_ text: String) -> String {
        guard text.utf8.count > ChatEventPayload.maxTextBytes else { return text }
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: ChatEventPayload.maxTextBytes)
        while end > text.startIndex, String.Index(end, within: text) == nil { end = text.utf8.index(before: end) }
        return String(text[..<end])
    }

    /// Ends the reply from outside its events (an abort, a history answer); later events are ignored.
    package mutating func finish() { finished = true }
}
