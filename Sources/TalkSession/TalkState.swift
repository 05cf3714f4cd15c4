import SessionBridge

/// Where the Talk loop is. `paused` is the loop holding still (microphone and speaker off) without leaving Talk
/// mode, for push-to-talk and wake-phrase modes to build on.
package enum TalkState: String, Sendable, Equatable {
    case idle
    case listening
    case thinking
    case speaking
    case paused

    /// The `talk.mode` phase the other Talk clients show for it.
    var phase: TalkPhase {
        switch self {
        case .idle, .paused: .idle
        case .listening: .listening
        case .thinking: .thinking
        case .speaking: .speaking
        }
    }
}
