import Foundation
import SessionBridge

/// Push-to-talk's commands (`TurnTaking+PushToTalk` decides them): the node commands (`NodeCommandRouter`) and the
/// daemon's control socket both come here. The actor hands the machine a fresh id for a capture a command may open,
/// and keeps who waits for a capture's result, by its id.
extension TalkSession {
    /// Carries out a push-to-talk command. `start` answers `{captureId}`; the others `{captureId, transcript?,
    /// status}`: `queued` (sent to the agent), `empty` (nothing heard), `cancelled`, `idle` (no capture open, or
    /// the session is not running), `busy` (`once` while a capture is open).
    package func pushToTalk(_ command: PushToTalkCommand) async -> PushToTalkResult {
        let id = UUID().uuidString.lowercased()
        let capture: TurnTaking.CaptureCommand =
            switch command {
            case .start: .start(id: id)
            case .stop: .stop
            case .cancel: .cancel
            case .once: .once(id: id)
            }
        var result = PushToTalkResult(captureId: machine.lastCapture?.captureId ?? "", status: .idle)
        for action in await handle(.pushToTalk(capture)) {
            switch action {
            case .answer(let answer): result = answer
            case .answerWhenCaptureEnds(let id): result = await captureResult(id)
            default: break
            }
        }
        emit(.pushToTalk(command: String(command.rawValue.dropFirst("talk.ptt.".count)), captureId: result.captureId,
                         status: result.status?.rawValue, transcript: result.transcript))
        return result
    }

    /// Waits for capture `id` to end (its last final, a stop's wait running out, a cancel, Talk off).
    private func captureResult(_ id: String) async -> PushToTalkResult {
        guard machine.capture?.id == id else {
            // It ended while the command's other actions were carried out.
            if let last = machine.lastCapture, last.captureId == id { return last }
            return PushToTalkResult(captureId: id, status: .idle)
        }
        return await withCheckedContinuation { captureWaiters[id, default: []].append($0) }
    }

    /// `Action.captureEnded`.
    func captureEnded(_ result: PushToTalkResult) {
        for waiter in captureWaiters.removeValue(forKey: result.captureId) ?? [] { waiter.resume(returning: result) }
    }

    /// Asks the agent to stop the run whose reply was cut off. Awaited, so it names that run before a later
    /// transcript can become "the last one sent"; the conversation does not wait for the Gateway's answer.
    func abortReply() async {
        await dependencies.conversation.abortReply()
    }
}
