/// Why a turn is over. The raw value is the `reason` of the `turnEnded` event (and of the `state` event of the
/// same step), the words users and scripts read: `--max-turns` counts the events, and no code decides on them.
package enum TurnEndReason: String, Sendable, Equatable, CaseIterable {
    /// The reply is over: every sentence played, or it ended (failed, aborted, empty) with nothing left to speak.
    case replyDone = "reply done"
    /// No reply text within `Settings.replyTimeout`.
    case noReply = "no reply"
    /// The user's words cut the reply off.
    case bargeIn = "barge-in"
    /// A wake phrase said on its own while the agent thought: the loop listens for the new request.
    case wakePhrase = "wake phrase"
    /// A push-to-talk capture took the floor while the agent thought or spoke.
    case pushToTalk = "push-to-talk"
}

/// Why Talk went off. The raw value is the `reason` of the `state` event to idle.
package enum TalkOffReason: String, Sendable, Equatable, CaseIterable {
    /// The session ended (`stop()`: the command's end, a signal).
    case stopped = "stopped"
    /// `talk stop` (the Gateway or the control socket); the session lives on.
    case talkStop = "talk stop"
}
