/// What an ack's `status` says of the run (upstream replays the stored result to a resend: chat.ts; macOS's
/// `ChatSendStatus` reads `error`/`timeout` as failed). Each but `started`/`in_flight` is final.
enum ReplayedAck: Equatable {
    /// `started`, `in_flight` or a status this client does not know: follow the run's events.
    case running
    /// `ok`, `completed`: the reply was delivered; its events are gone, `chat.history` has it.
    case delivered
    /// `timeout`, `error`: the run ended without a reply.
    case failed(kind: String?)
    case aborted

    init(status: String) {
        switch status.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() {
        case "ok", "completed": self = .delivered
        case "timeout": self = .failed(kind: "timeout")
        case "error", "failed": self = .failed(kind: nil)
        case "aborted", "cancelled", "canceled": self = .aborted
        default: self = .running
        }
    }
}
