import SessionBridge

/// Who has the floor, as a value with no I/O (the shape of `WebSocketConnection.StateMachine` and `Endpointer`):
/// events in, actions out, states that carry their data. Its owner keeps the tasks and devices, feeds it what it
/// hears and what its work reports, and carries out the actions in order, deciding no turn-taking question itself.
/// Barge-in is decided here, by `BargeInPolicy`'s rules. `TalkSession` is moving onto it; docs/ARCHITECTURE.md
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
    package private(set) var state: State = .idle
    /// `talk.config`'s `interruptOnSpeech`; `BargeInPolicy.forcedOff` overrides it.
    package var interruptOnSpeech = true
    /// The last turn's number; the next turn takes the one after.
    package private(set) var turns = 0
    /// The offset a barge-in cut the last reply at; the next transcript carries it.
    package private(set) var pendingInterruption: Double?
    /// The utterance that opened over the reply without interrupting it, until its final.
    package private(set) var openedOverReply: OpenedOverReply?
    /// The user is speaking (an utterance opened and not yet closed), and since when.
    package private(set) var userSpeechStartNs: UInt64?
    /// When the reply last stopped playing.
    package private(set) var speakingEndedNs: UInt64?

    package init(_ configuration: Configuration = Configuration()) { self.configuration = configuration }

    package var bargeInActive: Bool { interruptOnSpeech && !configuration.policy.forcedOff }

    /// Where the loop rests between turns in its mode.
    var restingState: State { configuration.mode == .alwaysListening ? .listening : .resting }

    package mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .control(let command): control(command)
        case .speechStarted(let position, let atNs): speechStarted(position, atNs: atNs)
        case .partial(let text, let loud, let atNs): partial(text, loudEnough: loud, atNs: atNs)
        case .speechEnded(let end, let closed, let endedNs): speechEnded(end, closed, endedNs: endedNs)
        case .final(let text): final(text)
        case .soundOnset: soundOnset()
        case .playbackStarted(let sentence, let seconds, let atNs): playbackStarted(sentence, seconds: seconds, atNs: atNs)
        case .playbackStopped(let completed): playbackStopped(completed: completed)
        case .replySentences(let sentences): replySentences(sentences)
        case .replyEnded(let atNs): endTurn(reason: "reply done", atNs: atNs)
        case .timerFired(let timer): timerFired(timer)
        case .pushToTalkStarted: pushToTalkStarted()
        case .pushToTalkEnded: pushToTalkEnded()
        case .connectionChanged(let description, let connected):
            [.emit(.connectionChanged(description))] + (connected && state != .idle ? [.announce(state.talkState.phase)] : [])
        }
    }

    // MARK: - Control

    private mutating func control(_ command: ControlCommand) -> [Action] {
        switch command {
        case .activate:
            guard state == .idle else { return [] }
            var actions: [Action] = [.openMicrophone]
            if configuration.mode == .pushToTalk { actions.append(.setMicrophone(.held)) }
            return actions + move(to: restingState, reason: "started")
        case .deactivate:
            guard state != .idle else { return [] }
            return quiet() + [.closeMicrophone] + move(to: .idle, reason: "talk stop")
        case .pause:
            if state == .idle { return [.refuse(.talkOff)] }
            guard state != .paused else { return [] }
            return quiet() + [.closeMicrophone] + move(to: .paused, reason: "paused")
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
        var actions: [Action] = [.cutReply(abort: false), .cancel(.replyTimeout), .cancel(.onsetHold)]
        if case .speaking(_, _, let intrusion) = state, intrusion?.lowered == true {
            actions.append(.emit(.replyLevel(gain: 1, reason: "the reply was cut off")))
        }
        return actions
    }

    // MARK: - Hearing

    private mutating func speechStarted(_ position: Int, atNs: UInt64) -> [Action] {
        userSpeechStartNs = atNs
        var actions: [Action] = [.emit(.speechStarted(positionMs: position))]
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

    private mutating func partial(_ text: String, loudEnough: Bool, atNs: UInt64) -> [Action] {
        var actions: [Action] = [.emit(.partialTranscript(text))]
        let policy = configuration.policy
        guard case .speaking(let turn, let progress, _) = state, bargeInActive, let startNs = userSpeechStartNs,
              BargeInTextGuard.isNewSpeech(text, spoken: turn.reply, minimumCharacters: policy.text.minimumNewCharacters),
              policy.evidence.holdReason(BargeInEvidence(speechMs: Int((atNs &- startNs) / 1_000_000))) == nil,
              loudEnough else { return actions }
        let offset = progress.offset(atNs: atNs)
        pendingInterruption = offset
        openedOverReply = nil
        actions += [.cutReply(abort: true), .cancel(.replyTimeout), .cancel(.onsetHold),
                    .emit(.bargeIn(offsetSeconds: offset, detectionLatencyMs: Double(atNs &- startNs) / 1e6, partial: text))]
        if case .speaking(_, _, let intrusion?) = state, intrusion.lowered {
            // Stopping the speaker returns its level.
            actions.append(.emit(.replyLevel(gain: 1, reason: "the reply was cut off")))
        }
        speakingEndedNs = atNs
        return actions + move(to: .listening, reason: "barge-in") + [.turnEnded]
    }

    private mutating func speechEnded(_ end: Int, _ closed: Int, endedNs: UInt64) -> [Action] {
        var actions: [Action] = [.emit(.speechEnded(lastSpeechEndMs: end, closedAtMs: closed))]
        if var opened = openedOverReply {
            if case .speaking = state { opened.endedWithinReply = true } else {
                opened.endedWithinReply = speakingEndedNs.map { endedNs <= $0 } ?? false
            }
            openedOverReply = opened
        }
        actions += restore(reason: "the utterance closed")
        return actions
    }

    private mutating func final(_ text: String) -> [Action] {
        userSpeechStartNs = nil
        let opened = openedOverReply
        openedOverReply = nil
        let ignored = "heard while the reply played, without interrupting it"
        if text.isEmpty { return [.emit(.transcriptIgnored(text: text, reason: "empty transcript"))] }
        if case .speaking = state { return [.emit(.transcriptIgnored(text: text, reason: ignored))] }
        if let opened {
            if opened.endedWithinReply { return [.emit(.transcriptIgnored(text: text, reason: ignored))] }
            if !BargeInTextGuard.isNewSpeech(text, spoken: opened.spoken, minimumCharacters: configuration.policy.text.minimumNewCharacters) {
                return [.emit(.transcriptIgnored(text: text, reason: "opened while the reply played, with no words of the user's own"))]
            }
        }
        return startTurn(text)
    }

    private mutating func soundOnset() -> [Action] {
        guard case .speaking(let turn, let progress, nil) = state, userSpeechStartNs == nil else { return [] }
        var intrusion = Intrusion(speechStartNs: nil, lowered: false)
        let actions = lower(&intrusion, reason: "sound over the reply")
        guard intrusion.lowered else { return [] }
        state = .speaking(turn, progress, intrusion)
        return actions + [.arm(.onsetHold, configuration.policy.lowering.onsetHold)]
    }

    // MARK: - The reply

    private mutating func startTurn(_ text: String) -> [Action] {
        var actions: [Action] = []
        if case .thinking = state { actions.append(.cutReply(abort: false)) }
        if case .speaking = state { actions.append(.cutReply(abort: false)) }
        turns += 1
        let offset = pendingInterruption
        pendingInterruption = nil
        let turn = Turn(number: turns, transcript: text)
        actions += [.sendTurn(number: turn.number, transcript: text, interruptedAtSeconds: offset),
                    .arm(.replyTimeout, configuration.replyTimeout)]
        return actions + move(to: .thinking(turn), reason: "transcript sent")
    }

    private mutating func replySentences(_ sentences: [String]) -> [Action] {
        func grown(_ turn: Turn) -> Turn {
            var turn = turn
            for sentence in sentences { turn.reply += (turn.reply.isEmpty ? "" : " ") + sentence }
            return turn
        }
        switch state {
        case .thinking(let turn): state = .thinking(grown(turn))
        case .speaking(let turn, let progress, let intrusion): state = .speaking(grown(turn), progress, intrusion)
        default: break
        }
        return []
    }

    private mutating func playbackStarted(_ sentence: String, seconds: Double, atNs: UInt64) -> [Action] {
        switch state {
        case .thinking(let turn):
            var progress = Progress()
            progress.playing = (atNs, seconds)
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

    private mutating func endTurn(reason: String, atNs: UInt64) -> [Action] {
        var actions: [Action] = [.cancel(.replyTimeout)]
        switch state {
        case .thinking: break
        case .speaking:
            speakingEndedNs = atNs
            actions += restore(reason: "the reply ended") + [.cancel(.onsetHold)]
            if !bargeInActive { actions.append(.arm(.muteTail, configuration.policy.muteTail)) }
        default: return []
        }
        return actions + move(to: restingState, reason: reason) + [.turnEnded]
    }

    private mutating func timerFired(_ timer: Timer) -> [Action] {
        switch timer {
        case .onsetHold:
            guard userSpeechStartNs == nil else { return [] }
            return restore(reason: "no utterance followed the sound")
        case .muteTail:
            if case .speaking = state { return [] }
            return [.setMicrophone(configuration.mode == .pushToTalk ? .held : .open)]
        case .replyTimeout:
            guard case .thinking = state else { return [] }
            let seconds = configuration.replyTimeout
            return [.cutReply(abort: false), .emit(.replyFailed("no reply within \(seconds)"))]
                + move(to: restingState, reason: "no reply") + [.turnEnded]
        case .idle, .wakeWindow, .captureLimit, .captureCloseWait, .evidenceRecheck:
            return []
        }
    }

    private mutating func pushToTalkStarted() -> [Action] {
        guard state != .idle, state != .paused else { return [] }
        var actions: [Action] = []
        switch state {
        case .thinking, .speaking:
            actions += [.cutReply(abort: true), .cancel(.replyTimeout), .cancel(.onsetHold)]
        default: break
        }
        return actions + [.setMicrophone(.open)] + move(to: .listening, reason: "push-to-talk")
    }

    private mutating func pushToTalkEnded() -> [Action] {
        guard configuration.mode == .pushToTalk else { return [] }
        return [.setMicrophone(.held)]
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

    private mutating func move(to new: State, reason: String) -> [Action] {
        let old = state
        state = new
        guard old.talkState != new.talkState else { return [] }
        var actions: [Action] = [.emit(.stateChanged(from: old.talkState, to: new.talkState, reason: reason))]
        if new != .idle { actions.append(.announce(new.talkState.phase)) }
        return actions
    }
}
