import Foundation
import SessionBridge

/// Push-to-talk: `talk.ptt.start` opens a capture (the microphone is open only then in `--ptt` mode, and a reply
/// still playing is cut off), `stop` sends what it heard, `cancel` drops it, `once` listens until the first
/// utterance closes (at most `pushToTalkOnceLimit`) and sends it. The node commands (`NodeCommandRouter`) and the
/// daemon's control socket both come here.
extension TalkSession {
    /// Carries out a push-to-talk command. `start` answers `{captureId}`; the others `{captureId, transcript?,
    /// status}`: `queued` (sent to the agent), `empty` (nothing heard), `cancelled`, `idle` (no capture open, or
    /// the session is not running), `busy` (`once` while a capture is open).
    package func pushToTalk(_ command: PushToTalkCommand) async -> PushToTalkResult {
        let result: PushToTalkResult
        switch command {
        case .start: result = await startCapture(once: false)
        case .stop: result = await stopCapture(handsFree.capture?.id)
        case .cancel: result = await cancelCapture()
        case .once: result = await captureOnce()
        }
        emit(.pushToTalk(command: String(command.rawValue.dropFirst("talk.ptt.".count)), captureId: result.captureId,
                         status: result.status?.rawValue, transcript: result.transcript))
        return result
    }

    private func startCapture(once: Bool) async -> PushToTalkResult {
        if let capture = handsFree.capture { return PushToTalkResult(captureId: capture.id) }
        // Talk off or paused: no capture may open the microphone behind the user's back.
        guard state != .idle, state != .paused else { return PushToTalkResult(captureId: handsFree.lastCaptureId, status: .idle) }
        let id = UUID().uuidString.lowercased()
        handsFree.capture = PushToTalkCapture(id: id, once: once)
        handsFree.lastCaptureId = id
        closeWakeWindowNow()
        handsFree.dropNext = false
        gate.setHeld(false)
        // `once` has a shorter limit of its own (`captureOnce`).
        if !once { arm(.captureLimit, settings.pushToTalkCaptureLimit) }
        // A reply thinking or playing is cut off and its run aborted; the loop listens.
        await handle(.pushToTalkStarted)
        return PushToTalkResult(captureId: id)
    }

    /// `Timer.captureLimit`: a `once` capture stops by itself (its caller gets the result); a capture still open at
    /// `Settings.pushToTalkCaptureLimit` ends as a `stop`: what it heard is sent.
    func captureLimitReached() async {
        guard let capture = handsFree.capture, !capture.stopping else { return }
        let id = capture.id
        if capture.once {
            _ = await stopCapture(id)
            return
        }
        let seconds = settings.pushToTalkCaptureLimit.components.seconds
        logger.notice("push-to-talk capture stopped at its limit", metadata: ["talk.pttLimitSeconds": "\(seconds)"])
        let result = await stopCapture(id)
        emit(.pushToTalk(command: "stop", captureId: result.captureId, status: result.status?.rawValue, transcript: result.transcript))
    }

    private func captureOnce() async -> PushToTalkResult {
        if let capture = handsFree.capture { return PushToTalkResult(captureId: capture.id, status: .busy) }
        let started = await startCapture(once: true)
        guard started.status == nil else { return started }
        arm(.captureLimit, settings.pushToTalkOnceLimit)
        return await result(of: started.captureId)
    }

    private func stopCapture(_ id: String?) async -> PushToTalkResult {
        guard let id, var capture = handsFree.capture, capture.id == id else {
            return PushToTalkResult(captureId: id ?? handsFree.lastCaptureId, status: .idle)
        }
        if !capture.stopping {
            capture.stopping = true
            handsFree.capture = capture
            // Held, the microphone gives the endpointer silence, which closes an utterance still open.
            if handsFree.mode == .pushToTalk { gate.setHeld(true) }
            arm(.captureCloseWait, settings.pushToTalkCloseWait)
        }
        if !machine.userSpeaking { return await finishCapture(id) }
        return await result(of: id)
    }

    /// Waits for the capture's end (its last final, a stop's wait running out, a cancel).
    private func result(of id: String) async -> PushToTalkResult {
        guard handsFree.capture?.id == id else { return handsFree.lastResult ?? PushToTalkResult(captureId: id, status: .idle) }
        return await withCheckedContinuation { handsFree.capture?.waiters.append($0) }
    }

    private func cancelCapture() async -> PushToTalkResult {
        guard let capture = handsFree.capture else { return PushToTalkResult(captureId: handsFree.lastCaptureId, status: .idle) }
        handsFree.capture = nil
        handsFree.dropNext = machine.userSpeaking
        if handsFree.mode == .pushToTalk { gate.setHeld(true) }
        let result = PushToTalkResult(captureId: capture.id, status: .cancelled)
        conclude(capture, with: result)
        await handle(.settle(reason: "push-to-talk cancelled"))
        return result
    }

    /// A final transcript while a capture holds the floor: kept for it, and for `once` or after `stop` the end of it.
    func heardDuringCapture(_ text: String) async {
        guard var capture = handsFree.capture else { return }
        if !text.isEmpty { capture.heard.append(text) }
        handsFree.capture = capture
        if capture.once || capture.stopping { await finishCapture(capture.id) }
    }

    /// Ends the capture: what it heard goes to the agent as one turn.
    @discardableResult
    func finishCapture(_ id: String) async -> PushToTalkResult {
        guard let capture = handsFree.capture, capture.id == id else {
            return handsFree.lastResult ?? PushToTalkResult(captureId: id, status: .idle)
        }
        handsFree.capture = nil
        if handsFree.mode == .pushToTalk { gate.setHeld(true) }
        let text = capture.heard.joined(separator: " ")
        let result: PushToTalkResult
        result = text.isEmpty ? PushToTalkResult(captureId: id, status: .empty) : PushToTalkResult(captureId: id, transcript: text, status: .queued)
        conclude(capture, with: result)
        await handle(text.isEmpty ? .settle(reason: "push-to-talk heard nothing") : .captured(text))
        return result
    }

    private func conclude(_ capture: PushToTalkCapture, with result: PushToTalkResult) {
        handsFree.lastResult = result
        timers.cancel(.captureLimit)
        timers.cancel(.captureCloseWait)
        // Always-listening idles again from here (the state may not have changed to re-arm it).
        rearmIdleTimer()
        for waiter in capture.waiters { waiter.resume(returning: result) }
    }

    /// Asks the agent to stop the run whose reply was cut off. Awaited, so it names that run before a later
    /// transcript can become "the last one sent"; the conversation does not wait for the Gateway's answer.
    func abortReply() async {
        await dependencies.conversation.abortReply()
    }
}
