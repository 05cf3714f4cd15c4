import SessionBridge

/// Who has the floor, as a value with no I/O (the shape of `WebSocketConnection.StateMachine` and `Endpointer`):
/// events in, actions out, states that carry their data. Its owner keeps the tasks and devices, feeds it what it
/// hears and what its work reports, and carries out the actions in order, deciding no turn-taking question itself.
/// Barge-in is decided here, by `BargeInPolicy`'s rules. `TalkSession` runs on it; docs/ARCHITECTURE.md
/// (Turn-taking) has the whole table.
package struct TurnTaking: Sendable {
    package struct Configuration: Sendable, Equatable {
        package var policy = BargeInPolicy()
        /// Where the loop rests between turns: wake-phrase and push-to-talk modes rest in `resting`.
        package var mode = HandsFreeMode.alwaysListening
        package var replyTimeout: Duration = .seconds(340)

        package init() {}
    }

    package let configuration: Configuration
    package internal(set) var state: State = .idle
    /// `talk.config`'s `interruptOnSpeech`; `BargeInPolicy.forcedOff` overrides it.
    package var interruptOnSpeech = true
    /// The last turn's number; the next turn takes the one after.
    package private(set) var turns = 0
    /// The offset a barge-in cut the last reply at; the next transcript carries it.
    package internal(set) var pendingInterruption: Double?
    /// The utterance that opened over the reply without interrupting it, until its final.
    package internal(set) var openedOverReply: OpenedOverReply?
    /// The user is speaking (an utterance opened and not yet closed), and since when.
    package internal(set) var userSpeechStartNs: UInt64?
    /// Where that utterance starts in the capture stream (its first voiced frame): the barge-in evidence is read from there.
    package private(set) var userSpeechPositionMs = 0
    /// The utterance's latest partial: a held one is judged again when `Timer.evidenceRecheck` fires.
    package private(set) var latestPartial = ""
    /// When the reply last stopped playing.
    package private(set) var speakingEndedNs: UInt64?
    /// How far the capture stream had reached when the reply last ended by itself (stream ms), if known.
    package private(set) var replyEndHeardMs: Int?
    /// Where the loop rests between turns, as the hands-free mode says now: listening (always-listening, a wake
    /// window open, a push-to-talk capture) or resting. Its owner keeps the hands-free bookkeeping and sets this.
    package var restsListening: Bool
    /// Approvals and notices waiting for the next pause, approvals first (`TurnTaking+Asking`).
    package internal(set) var waiting: [Waiting] = []
    /// The last prompt's number: a `promptSpoken` of an older one is stale.
    package internal(set) var prompts = 0

    package init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
        restsListening = configuration.mode == .alwaysListening
    }

    package var bargeInActive: Bool { interruptOnSpeech && !configuration.policy.forcedOff }

    /// Where the loop rests between turns in its mode.
    var restingState: State { restsListening ? .listening : .resting }

    /// The user is speaking: a reply waits for the floor.
    package var userSpeaking: Bool { userSpeechStartNs != nil }

    package mutating func handle(_ event: Event) -> [Action] {
        // At a pause, what waits for one begins: an approval's question, or a notice.
        dispatch(event) + atPause()
    }

    private mutating func dispatch(_ event: Event) -> [Action] {
        switch event {
        case .control(let command): control(command)
        case .speechStarted(let position, let atNs): speechStarted(position, atNs: atNs)
        case .partial(let text, let mayInterrupt, let atNs): partial(text, mayInterrupt: mayInterrupt, atNs: atNs)
        case .bargeInEvidence(let text, let evidence, let loud, let atNs): weighed(text, evidence, loudEnough: loud, atNs: atNs)
        case .speechEnded(let end, let closed, let endedNs): speechEnded(end, closed, endedNs: endedNs)
        case .final(let text, let timing): final(text, timing: timing)
        case .captured(let text): captured(text)
        case .finalKept: finalKept()
        case .soundOnset: soundOnset()
        case .playbackStarted(let sentence, let seconds, let atNs): playbackStarted(sentence, seconds: seconds, atNs: atNs)
        case .playbackStopped(let completed): playbackStopped(completed: completed)
        case .replySentences(let sentences): replySentences(sentences)
        case .replyEnded(let atNs, let heardToMs): endTurn(atNs: atNs, heardToMs: heardToMs)
        case .timerFired(let timer): timerFired(timer)
        case .pushToTalkStarted: pushToTalkStarted()
        case .settle(let reason): settle(reason)
        case .woken: woken()
        case .connectionChanged(let description, let connected):
            [.emit(.connectionChanged(description))] + (connected && state != .idle ? [.announce(state.talkState.phase)] : [])
        case .noticeArrived(let text): noticeArrived(text)
        case .approvalArrived(let approval): approvalArrived(approval)
        case .approvalWithdrawn(let id): approvalWithdrawn(id)
        case .promptSpoken(let number): promptSpoken(number)
        case .answerHeard(let text, let confidence): answerHeard(text, confidence: confidence)
        case .decisionSent(let id, let failure): decisionSent(id, failure: failure)
        }
    }

    // MARK: - Control

    private mutating func control(_ command: ControlCommand) -> [Action] {
        switch command {
        case .activate:
            guard state == .idle else { return [] }
            return [.openMicrophone] + move(to: restingState, reason: "started")
        case .deactivate(let reason):
            guard state != .idle else { return [] }
            // The microphone first: nothing heard from now on becomes a turn.
            return [.closeMicrophone] + quiet() + abandonAsking(all: true) + move(to: .idle, reason: reason)
        case .pause:
            if state == .idle { return [.refuse(.talkOff)] }
            guard state != .paused else { return [] }
            return [.closeMicrophone] + quiet() + abandonAsking(all: true) + move(to: .paused, reason: "paused")
        case .resume:
            if state == .idle { return [.refuse(.talkOff)] }
            guard state == .paused else { return [] }
            return [.openMicrophone] + move(to: restingState, reason: "resumed")
        case .type(let text):
            if state == .idle { return [.refuse(.talkOff)] }
            if state == .paused { return [.refuse(.paused)] }
            return startTurn(text)
        }
    }

    /// Whatever the turn is doing stops (no abort: the user did not cut in) and the floor is free.
    private mutating func quiet() -> [Action] {
        userSpeechStartNs = nil
        openedOverReply = nil
        var actions: [Action] = [.cutReply(abort: false), .cancel(.replyTimeout), .cancel(.onsetHold), .cancel(.evidenceRecheck)]
        if case .speaking(_, _, let intrusion) = state, intrusion?.lowered == true {
            actions.append(.emit(.replyLevel(gain: 1, reason: "the reply was cut off")))
        }
        return actions + leaveSpeaking(atNs: nil)
    }

    /// The reply stops playing: without barge-in the microphone opens after the mute tail.
    private mutating func leaveSpeaking(atNs: UInt64?) -> [Action] {
        guard case .speaking = state else { return [] }
        if let atNs { speakingEndedNs = atNs }
        return bargeInActive ? [] : [.arm(.muteTail, configuration.policy.muteTail)]
    }

    // MARK: - Hearing

    private mutating func speechStarted(_ position: Int, atNs: UInt64) -> [Action] {
        userSpeechStartNs = atNs
        userSpeechPositionMs = position
        latestPartial = ""
        var actions: [Action] = [.emit(.speechStarted(positionMs: position)), .cancel(.evidenceRecheck)]
        if case .asking = state { return actions + answerBegan() }
        guard case .speaking(let turn, let progress, let intrusion) = state else {
            openedOverReply = nil
            return actions
        }
        openedOverReply = OpenedOverReply(spoken: turn.reply)
        var now = intrusion ?? Intrusion(speechStartNs: atNs, lowered: false)
        now.speechStartNs = atNs
        actions.append(.cancel(.onsetHold))
        actions += lower(&now, reason: "an utterance opened over the reply")
        state = .speaking(turn, progress, now)
        return actions
    }

    /// New words over the reply, when barge-in is on and the mode lets them cut in, are weighed: the owner asks
    /// the devices for the evidence (`weighBargeIn`) and hands it back (`bargeInEvidence`).
    private mutating func partial(_ text: String, mayInterrupt: Bool, atNs: UInt64) -> [Action] {
        latestPartial = text
        let actions: [Action] = [.emit(.partialTranscript(text)), .cancel(.evidenceRecheck)]
        guard mayInterrupt, mayBargeIn(text) else { return actions }
        return actions + [.weighBargeIn(partial: text, fromPositionMs: userSpeechPositionMs)]
    }

    /// The reply plays, barge-in is on, the user is speaking, and `text` holds words the reply did not say.
    private func mayBargeIn(_ text: String) -> Bool {
        guard case .speaking(let turn, _, _) = state, bargeInActive, userSpeechStartNs != nil else { return false }
        return BargeInTextGuard.isNewSpeech(text, spoken: turn.reply, minimumCharacters: configuration.policy.text.minimumNewCharacters)
    }

    private mutating func weighed(_ text: String, _ evidence: BargeInEvidence, loudEnough: Bool, atNs: UInt64) -> [Action] {
        // The state may have moved while the devices were asked.
        guard mayBargeIn(text), case .speaking(_, let progress, let intrusion) = state, let startNs = userSpeechStartNs else { return [] }
        if let reason = configuration.policy.evidence.holdReason(evidence) {
            // Judged again shortly, while it is still the latest partial of the same utterance: a user's "stop" whose
            // first frames met the reply at full level is explained less once it is lowered.
            return [.held(partial: text, reason: reason), .arm(.evidenceRecheck, BargeInEvidenceMeter.recheck)]
        }
        guard loudEnough else {
            return [.held(partial: text, reason: "the words are not loud enough over the noise floor and the reply's echo")]
        }
        let offset = progress.offset(atNs: atNs)
        pendingInterruption = offset
        openedOverReply = nil
        var actions: [Action] = [.cutReply(abort: true), .cancel(.replyTimeout), .cancel(.onsetHold),
                                 .emit(.bargeIn(offsetSeconds: offset, detectionLatencyMs: Double(atNs &- startNs) / 1e6, partial: text))]
        if intrusion?.lowered == true {
            // Stopping the speaker returns its level.
            actions.append(.emit(.replyLevel(gain: 1, reason: "the reply was cut off")))
        }
        speakingEndedNs = atNs
        return actions + move(to: .listening, reason: "barge-in") + [.turnEnded(reason: "barge-in")]
    }

    private mutating func speechEnded(_ end: Int, _ closed: Int, endedNs: UInt64) -> [Action] {
        var actions: [Action] = [.emit(.speechEnded(lastSpeechEndMs: end, closedAtMs: closed))]
        if var opened = openedOverReply {
            if case .speaking = state { opened.endedWithinReply = true } else {
                // With the echo's tail: in stream time where known (the recogniser may report the end seconds late).
                let tail = configuration.policy.echoTail.afterReplyMs
                opened.endedWithinReply =
                    if let heard = replyEndHeardMs { end <= heard + tail } else {
                        speakingEndedNs.map { endedNs <= $0 &+ UInt64(tail) * 1_000_000 } ?? false
                    }
            }
            openedOverReply = opened
        }
        actions += restore(reason: "the utterance closed")
        return actions
    }

    private mutating func captured(_ text: String) -> [Action] {
        guard state != .idle, state != .paused else { return [] }
        return startTurn(text)
    }

    private mutating func finalKept() -> [Action] {
        userSpeechStartNs = nil
        openedOverReply = nil
        return []
    }

    private mutating func soundOnset() -> [Action] {
        guard case .speaking(let turn, let progress, nil) = state, userSpeechStartNs == nil, bargeInActive else { return [] }
        var intrusion = Intrusion(speechStartNs: nil, lowered: false)
        let actions = lower(&intrusion, reason: "sound over the reply")
        guard intrusion.lowered else { return [] }
        state = .speaking(turn, progress, intrusion)
        return actions + [.arm(.onsetHold, configuration.policy.lowering.onsetHold)]
    }

    // MARK: - The reply

    /// The user spoke again (or typed): a reply still on its way is dropped, one playing is cut off, the new words go out.
    mutating func startTurn(_ text: String) -> [Action] {
        // A typed turn while the loop speaks for itself: the prompt stops, an approval asked stays pending.
        var actions: [Action] = abandonAsking(all: false)
        if case .speaking(_, _, let intrusion) = state {
            actions += [.cutReply(abort: false), .cancel(.onsetHold)]
            if intrusion?.lowered == true { actions.append(.emit(.replyLevel(gain: 1, reason: "the reply was cut off"))) }
            actions += leaveSpeaking(atNs: nil)
        }
        turns += 1
        let offset = pendingInterruption
        pendingInterruption = nil
        let turn = Turn(number: turns, transcript: text)
        actions += [.sendTurn(number: turn.number, transcript: text, interruptedAtSeconds: offset),
                    .arm(.replyTimeout, configuration.replyTimeout)]
        return actions + move(to: .thinking(turn), reason: "transcript sent")
    }

    /// The agent wrote (an acknowledgement alone does not count: an agent that never writes a word must not hold
    /// the loop): the reply timeout is off, and the reply's text grows.
    private mutating func replySentences(_ sentences: [String]) -> [Action] {
        func grown(_ turn: Turn) -> Turn {
            var turn = turn
            for sentence in sentences { turn.reply += (turn.reply.isEmpty ? "" : " ") + sentence }
            return turn
        }
        switch state {
        case .thinking(let turn): state = .thinking(grown(turn))
        case .speaking(let turn, let progress, let intrusion): state = .speaking(grown(turn), progress, intrusion)
        default: return []
        }
        return [.cancel(.replyTimeout)]
    }

    private mutating func playbackStarted(_ sentence: String, seconds: Double, atNs: UInt64) -> [Action] {
        switch state {
        case .thinking(let turn):
            var progress = Progress()
            progress.playing = (atNs, seconds)
            replyEndHeardMs = nil
            var actions: [Action] = [.cancel(.replyTimeout)]
            if !bargeInActive { actions += [.cancel(.muteTail), .setMicrophone(.muted)] }
            return actions + move(to: .speaking(turn, progress, nil), reason: "reply")
        case .speaking(let turn, var progress, let intrusion):
            progress.playing = (atNs, seconds)
            state = .speaking(turn, progress, intrusion)
            return []
        default:
            return []
        }
    }

    private mutating func playbackStopped(completed: Bool) -> [Action] {
        guard case .speaking(let turn, var progress, let intrusion) = state else { return [] }
        if let playing = progress.playing { progress.spokenSeconds += playing.seconds }
        progress.playing = nil
        state = .speaking(turn, progress, intrusion)
        return []
    }

    private mutating func endTurn(atNs: UInt64, heardToMs: Int?) -> [Action] {
        var actions: [Action] = [.cancel(.replyTimeout)]
        switch state {
        case .thinking: break
        case .speaking:
            replyEndHeardMs = heardToMs
            actions += restore(reason: "the reply ended") + [.cancel(.onsetHold)] + leaveSpeaking(atNs: atNs)
        default: return []
        }
        return actions + move(to: restingState, reason: "reply done") + [.turnEnded(reason: "reply done")]
    }

    private mutating func timerFired(_ timer: Timer) -> [Action] {
        switch timer {
        case .onsetHold:
            guard userSpeechStartNs == nil else { return [] }
            return restore(reason: "no utterance followed the sound")
        case .muteTail:
            if case .asking = state { return answerOpens() }
            if case .speaking = state { return [] }
            return [.setMicrophone(.open)]
        case .replyTimeout:
            guard case .thinking = state else { return [] }
            let seconds = configuration.replyTimeout
            return [.cutReply(abort: false), .emit(.replyFailed("no reply within \(seconds)"))]
                + move(to: restingState, reason: "no reply") + [.turnEnded(reason: "no reply")]
        case .evidenceRecheck:
            guard mayBargeIn(latestPartial) else { return [] }
            return [.weighBargeIn(partial: latestPartial, fromPositionMs: userSpeechPositionMs)]
        case .answerTimeout:
            return noAnswer()
        case .idle, .wakeWindow, .captureLimit, .captureCloseWait:
            // The hands-free mode's: its owner keeps them.
            return []
        }
    }

    /// The user took the floor while the agent thought or spoke: its reply stops and its run is aborted.
    private mutating func pushToTalkStarted() -> [Action] {
        guard state != .idle, state != .paused else { return [] }
        // The user takes the floor: the loop's own prompt stops, an approval asked stays pending.
        var actions: [Action] = abandonAsking(all: false)
        var ended = false
        switch state {
        case .thinking, .speaking:
            actions += [.cutReply(abort: true), .cancel(.replyTimeout), .cancel(.onsetHold)] + leaveSpeaking(atNs: nil)
            ended = true
        default: break
        }
        return actions + move(to: .listening, reason: "push-to-talk") + (ended ? [.turnEnded(reason: "push-to-talk")] : [])
    }

    private mutating func settle(_ reason: String) -> [Action] {
        guard state == .listening || state == .resting else { return [] }
        return move(to: restingState, reason: reason)
    }

    private mutating func woken() -> [Action] {
        switch state {
        case .thinking:
            return [.cutReply(abort: false), .cancel(.replyTimeout)] + move(to: .listening, reason: "wake phrase")
                + [.turnEnded(reason: "wake phrase")]
        case .listening, .resting:
            return move(to: .listening, reason: "wake phrase")
        default:
            return []
        }
    }

    // MARK: - Pieces

    /// Lowers the reply while the user may be cutting in (nothing when barge-in is off or the policy keeps the level).
    private func lower(_ intrusion: inout Intrusion, reason: String) -> [Action] {
        guard bargeInActive, let gain = configuration.policy.lowering.gain, !intrusion.lowered else { return [] }
        intrusion.lowered = true
        return [.emit(.replyLevel(gain: Double(gain), reason: reason)), .setReplyGain(gain)]
    }

    /// The reply's level returns, and the intrusion is over.
    private mutating func restore(reason: String) -> [Action] {
        guard case .speaking(let turn, let progress, let intrusion?) = state else { return [] }
        state = .speaking(turn, progress, nil)
        guard intrusion.lowered else { return [] }
        return [.cancel(.onsetHold), .emit(.replyLevel(gain: 1, reason: reason)), .setReplyGain(1)]
    }

    mutating func move(to new: State, reason: String) -> [Action] {
        let old = state
        state = new
        guard old.talkState != new.talkState else { return [] }
        var actions: [Action] = [.emit(.stateChanged(from: old.talkState, to: new.talkState, reason: reason))]
        if new != .idle { actions.append(.announce(new.talkState.phase)) }
        return actions
    }
}
