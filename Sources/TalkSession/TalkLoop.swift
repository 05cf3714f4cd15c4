import SessionBridge

/// What the daemon drives, whichever loop runs: the native one (`TalkSession`: local recognition, the agent's
/// text reply spoken here) or the Gateway's realtime relay (`RealtimeTalkSession`). One daemon path serves both
/// through this protocol; a loop that cannot do something refuses inside the loop, with its reason
/// (`TalkLoopRefusal`), and the daemon answers the client with it.
package protocol TalkLoop: Actor {
    /// How the status names the loop ("continuous" or "realtime").
    nonisolated var kind: TalkLoopKind { get }
    /// Everything the loop does, until `stop()`.
    nonisolated var events: AsyncStream<TalkEvent> { get }
    var talkState: TalkState { get }

    /// Starts the loop; with `listening: false` Talk stays off until `activate()`.
    func start(listening: Bool) async throws
    /// Ends the loop: the event stream ends.
    func stop() async
    /// `talk start` / `talk stop`.
    func activate() async throws
    func deactivate() async
    /// Closes the microphone stream until `resume()`.
    func pause() async throws
    func resume() async throws
    /// A typed turn (`say TEXT`).
    func type(_ text: String) async throws
    /// A push-to-talk command (the node's `talk.ptt.*` or the control socket's `ptt`).
    func pushToTalk(_ command: PushToTalkCommand) async throws -> PushToTalkResult
    /// Throws the reason push-to-talk cannot begin now (Talk off or paused; a loop that has none).
    func checkPushToTalk() async throws
    /// A reloaded configuration's voice and rate (nil: leave as is).
    func setVoice(_ voice: String?, rate: Int?) async
    /// The Gateway's `talk.config`, as read at each connect.
    func apply(_ config: TalkConfig) async
    /// The operator socket's state, as it changes.
    func connectionChanged(_ description: String, connected: Bool) async
    /// Speaks a short notice (the Gateway's `system.notify`) at the loop's next pause, never over the user's
    /// utterance or a reply; false when it is dropped (Talk off or paused, or a loop that cannot).
    func speakNotice(_ text: String) async -> Bool
    /// Asks about an approval aloud at the next pause and takes the answer by voice; its decision, or the approval
    /// left pending, goes to `answers`. False: not asked (Talk off or paused, or a loop that cannot), and the caller
    /// leaves the desktop notification.
    func ask(_ approval: PendingApproval, answers: any ApprovalAnswers) async -> Bool
    /// An approval decided elsewhere or expired: not asked, or withdrawn aloud while asked.
    func approvalGone(id: String) async
}

package enum TalkLoopKind: String, Sendable {
    case continuous, realtime
}

/// Something this loop does not do, with the reason a person reads.
package struct TalkLoopRefusal: Error, Equatable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }

    package static let talkOffOrPaused = TalkLoopRefusal("Talk is off or paused: run 'openclaw-talk talk start' or 'resume' first")
}

extension TalkSession: TalkLoop {
    package nonisolated var kind: TalkLoopKind { .continuous }
    package var talkState: TalkState { state }

    package func checkPushToTalk() throws {
        guard state != .idle, state != .paused else { throw TalkLoopRefusal.talkOffOrPaused }
    }
}

extension RealtimeTalkSession: TalkLoop {
    package static let typedTurnRefusal = TalkLoopRefusal(
        "'say' does not apply in realtime mode: the Gateway's realtime relay hears the microphone "
            + "and answers itself, with no typed turns; run with '--mode talk' to type to the assistant")

    package nonisolated var kind: TalkLoopKind { .realtime }
    package func type(_ text: String) async throws { throw Self.typedTurnRefusal }
    /// The relay speaks in the Gateway's voice: nothing of the local config applies to a running session.
    package func setVoice(_ voice: String?, rate: Int?) {}
    /// The relay client follows `talk.config` itself (`TalkRelayClient.setRealtime`).
    package func apply(_ config: TalkConfig) {}
    /// The relay client reconnects by itself.
    package func connectionChanged(_ description: String, connected: Bool) {}
    /// The relay speaks and hears through the Gateway's realtime session: a prompt of our own would talk over its
    /// voice, and its listener has no grammar for the answer. Notifications are shown, approvals left to the desktop
    /// notification and the `approve` command.
    package func speakNotice(_ text: String) -> Bool { false }
    package func ask(_ approval: PendingApproval, answers: any ApprovalAnswers) -> Bool { false }
    package func approvalGone(id: String) {}
}
