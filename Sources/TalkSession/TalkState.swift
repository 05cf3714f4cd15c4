import SessionBridge

/// Where the Talk loop is. `paused` is the loop holding still (microphone and speaker off) without leaving Talk
/// mode; `waiting` is wake-phrase and push-to-talk modes between turns.
package enum TalkState: String, Sendable, Equatable {
    case idle
    case listening
    case thinking
    case speaking
    case paused
    /// Waiting for a wake phrase (the microphone open) or for push-to-talk (the microphone held): nothing heard
    /// now is sent.
    case waiting

    /// The `talk.mode` phase the other Talk clients show for it.
    var phase: TalkPhase {
        switch self {
        case .idle, .paused, .waiting: .idle
        case .listening: .listening
        case .thinking: .thinking
        case .speaking: .speaking
        }
    }
}
