/// The push-to-talk commands a Talk node declares and the Gateway may invoke (`node.invoke`).
package enum PushToTalkCommand: String, Sendable, Equatable, CaseIterable {
    case start = "talk.ptt.start"
    case stop = "talk.ptt.stop"
    case cancel = "talk.ptt.cancel"
    /// Listens until silence (at most 12 s) and sends what was said.
    case once = "talk.ptt.once"
}

/// What became of a capture.
package enum PushToTalkStatus: String, Sendable, Equatable, CaseIterable {
    case queued
    case empty
    case offline
    case cancelled
    case idle
    case busy
}

/// The answer to a push-to-talk command: `{captureId}` for `start`, `{captureId, transcript?, status}` for
/// the others.
package struct PushToTalkResult: Sendable, Equatable {
    package var captureId: String
    package var transcript: String?
    package var status: PushToTalkStatus?

    package init(captureId: String, transcript: String? = nil, status: PushToTalkStatus? = nil) {
        self.captureId = captureId
        self.transcript = transcript
        self.status = status
    }

    var json: JSONValue {
        var o: [String: JSONValue] = ["captureId": .string(captureId)]
        if let transcript { o["transcript"] = .string(transcript) }
        if let status { o["status"] = .string(status.rawValue) }
        return .object(o)
    }
}

/// What the Talk loop provides to carry the commands out; `params` is the command's params, if any.
/// A thrown error is reported to the Gateway as the command's failure.
package typealias PushToTalkHandler = @Sendable (PushToTalkCommand, JSONValue?) async throws -> PushToTalkResult
