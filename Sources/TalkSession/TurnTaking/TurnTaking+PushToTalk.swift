import SessionBridge

/// Push-to-talk (`talk.ptt.*`, in any mode): `start` opens a capture (a reply thinking or playing is cut off and its
/// run aborted), `stop` sends what it heard as one turn (an utterance still open is waited for, at most
/// `pushToTalkCloseWait`: in push-to-talk mode the held microphone gives the endpointer the silence that closes
/// it), `cancel` drops it (and the final of an utterance still open), `once` listens until the first utterance closes.
/// A capture nothing stops ends as a `stop` at `pushToTalkCaptureLimit` (`once`: `pushToTalkOnceLimit`). In
/// push-to-talk mode the microphone is held between captures. The owner keeps who waits for a capture's result,
/// by the capture's id: `answer` answers the command now, `answerWhenCaptureEnds` when `captureEnded` comes.
extension TurnTaking {
    /// A push-to-talk command; `start` and `once` carry the id a capture they open takes (fresh from the owner).
    package enum CaptureCommand: Sendable, Equatable {
        case start(id: String)
        case stop
        case cancel
        case once(id: String)
    }

    /// The capture holding the floor: what it heard, and whether (and why) it is stopping.
    package struct Capture: Sendable, Equatable {
        package enum Stopping: Sendable, Equatable {
            /// `talk.ptt.stop`: its caller waits for the result.
            case asked
            /// Its limit ran out: a `start`'s capture is told as a `stop` (`pushToTalk` event) when it ends; a
            /// `once`'s caller has its result.
            case atLimit
        }

        package var id: String
        package var once: Bool
        package var heard: [String] = []
        /// Stopping, waiting for the final of an utterance still open.
        package var stopping: Stopping?
    }

    /// How the last capture ended (the answer to a command that comes after its end), or nil.
    var lastCaptureId: String { lastCapture?.captureId ?? "" }

    mutating func pushToTalk(_ command: CaptureCommand) -> [Action] {
        switch command {
        case .start(let id): startCapture(id: id, once: false)
        case .once(let id): startCapture(id: id, once: true)
        case .stop: stopCapture(.asked)
        case .cancel: cancelCapture()
        }
    }

    private mutating func startCapture(id: String, once: Bool) -> [Action] {
        if let capture { return [.answer(PushToTalkResult(captureId: capture.id, status: once ? .busy : nil))] }
        // Talk off or paused: no capture may open the microphone behind the user's back.
        guard state != .idle, state != .paused else { return [.answer(PushToTalkResult(captureId: lastCaptureId, status: .idle))] }
        capture = Capture(id: id, once: once)
        dropNextFinal = false
        let limit = once ? configuration.pushToTalkOnceLimit : configuration.pushToTalkCaptureLimit
        return microphoneFollows() + [.arm(.captureLimit, limit)] + floorTaken()
            + [once ? .answerWhenCaptureEnds(id: id) : .answer(PushToTalkResult(captureId: id))]
    }

    /// The user took the floor while the agent thought or spoke: its reply stops and its run is aborted.
    private mutating func floorTaken() -> [Action] {
        // The loop's own prompt stops, an approval asked stays pending; a wake window shuts.
        var actions: [Action] = abandonAsking(all: false)
        if case .wakePhrase(true, let idledOut) = handsFree {
            handsFree = .wakePhrase(windowOpen: false, idledOut: idledOut)
            actions.append(.cancel(.wakeWindow))
        }
        switch state {
        case .thinking, .speaking:
            actions += [.cutReply(abort: true), .cancel(.replyTimeout), .cancel(.onsetHold)] + leaveSpeaking(atNs: nil)
            return actions + turnOver(.pushToTalk, to: .listening)
        default:
            return actions + move(to: .listening, reason: "push-to-talk")
        }
    }

    /// `stop`, or the limit ran out: what the capture heard goes out, once the utterance still open has its final.
    private mutating func stopCapture(_ why: Capture.Stopping) -> [Action] {
        guard var capture else { return [.answer(PushToTalkResult(captureId: lastCaptureId, status: .idle))] }
        let asked = why == .asked
        guard userSpeaking else {
            capture.stopping = capture.stopping ?? why
            let (result, actions) = endCapture(capture)
            return actions + (asked ? [.answer(result)] : [])
        }
        var actions: [Action] = []
        if capture.stopping == nil {
            capture.stopping = why
            self.capture = capture
            // Held (push-to-talk mode), the microphone gives the endpointer silence, which closes the utterance.
            actions += microphoneFollows()
            actions.append(.arm(.captureCloseWait, configuration.pushToTalkCloseWait))
        }
        return actions + (asked ? [.answerWhenCaptureEnds(id: capture.id)] : [])
    }

    private mutating func cancelCapture() -> [Action] {
        guard let capture else { return [.answer(PushToTalkResult(captureId: lastCaptureId, status: .idle))] }
        self.capture = nil
        // The utterance still open is the capture's: its final is dropped.
        dropNextFinal = userSpeaking
        let result = PushToTalkResult(captureId: capture.id, status: .cancelled)
        return concluded(result) + settle("push-to-talk cancelled") + idleTimer() + [.answer(result)]
    }

    /// A final while a capture holds the floor: kept for it, and for `once` or a stopping capture the end of it.
    mutating func heardDuringCapture(_ text: String) -> [Action] {
        guard var capture else { return [] }
        if !text.isEmpty { capture.heard.append(text) }
        self.capture = capture
        guard capture.once || capture.stopping != nil else { return [] }
        return endCapture(capture).actions
    }

    /// The capture ends: what it heard goes to the agent as one turn.
    private mutating func endCapture(_ capture: Capture) -> (result: PushToTalkResult, actions: [Action]) {
        self.capture = nil
        let text = capture.heard.joined(separator: " ")
        let result = text.isEmpty ? PushToTalkResult(captureId: capture.id, status: .empty)
            : PushToTalkResult(captureId: capture.id, transcript: text, status: .queued)
        var actions = concluded(result)
        if text.isEmpty { actions += settle("push-to-talk heard nothing") } else if state != .idle, state != .paused { actions += startTurn(text) }
        // A capture its limit stopped is told as a stop (a `once`'s caller has the result).
        if capture.stopping == .atLimit, !capture.once {
            actions.append(.emit(.pushToTalk(command: "stop", captureId: capture.id, status: result.status?.rawValue, transcript: result.transcript)))
        }
        // Always-listening idles again from here (the state may not have changed to start the timeout).
        return (result, actions + idleTimer())
    }

    /// The capture is over: its timers stop, push-to-talk mode holds the microphone again, its waiters are answered.
    private mutating func concluded(_ result: PushToTalkResult) -> [Action] {
        lastCapture = result
        return microphoneFollows() + [.cancel(.captureLimit), .cancel(.captureCloseWait), .captureEnded(result)]
    }

    /// `Timer.captureLimit`: the capture stops by itself (a `once`'s caller gets the result; any other is told as a
    /// `stop`): what it heard is sent.
    mutating func captureLimitReached() -> [Action] {
        guard let capture, capture.stopping == nil else { return [] }
        let seconds = configuration.pushToTalkCaptureLimit.components.seconds
        return (capture.once ? [] : [.note("push-to-talk capture stopped at its limit", ["talk.pttLimitSeconds": "\(seconds)"])])
            + stopCapture(.atLimit)
    }

    /// `Timer.captureCloseWait`: the stopping capture's utterance gave no final in time; it ends with what it has.
    mutating func captureCloseWaitRanOut() -> [Action] {
        guard let capture else { return [] }
        return endCapture(capture).actions
    }

    /// Talk goes off: a capture open is cancelled.
    mutating func cancelOpenCapture() -> [Action] {
        guard let capture else { return [] }
        self.capture = nil
        return concluded(PushToTalkResult(captureId: capture.id, status: .cancelled))
    }

}
