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
        /// Wake-phrase mode's local phrases (`Settings.wakePhrases`); the Gateway's come as `gatewayWakePhrases`.
        package var wakePhrases: [String] = []
        /// How long after a wake phrase said on its own the next utterance may begin (`Settings.wakeFollowUp`).
        package var wakeFollowUp: Duration = .seconds(8)
        /// `Settings.idleTimeout` as the session starts; `talk.config` may change it (`Event.idleTimeoutChanged`).
        package var idleTimeout: Duration?
        /// A push-to-talk capture nothing stops ends as a stop after this long (`Settings.pushToTalkCaptureLimit`).
        package var pushToTalkCaptureLimit: Duration = .seconds(60)
        /// `once` listens at most this long (`Settings.pushToTalkOnceLimit`).
        package var pushToTalkOnceLimit: Duration = .seconds(12)
        /// A stopping capture waits at most this long for its utterance's final (`Settings.pushToTalkCloseWait`).
        package var pushToTalkCloseWait: Duration = .seconds(5)
        /// A transcript source (the Gateway's transcription relay) hears the utterances the mode lets out.
        package var relays = false

        package init() {}
    }

    package let configuration: Configuration
    package internal(set) var state: State = .idle
    /// `talk.config`'s `interruptOnSpeech`; `BargeInPolicy.forcedOff` overrides it.
    package var interruptOnSpeech = true
    /// The last turn's number; the next turn takes the one after.
    package internal(set) var turns = 0
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
    /// Where that partial's audio ends (stream ms): barge-in's evidence and energy guard judge the audio through it
    /// (a recheck, through the latest frame).
    package private(set) var latestPartialEndMs: Int?
    /// The utterance being spoken goes to the transcript source (`TurnTaking+Relay`), decided as it opens, held if
    /// it opened over the reply; and the sound onsets that say where the user began in a held one.
    package internal(set) var relay = RelayTrack()
    /// When the reply last stopped playing.
    package private(set) var speakingEndedNs: UInt64?
    /// How far the capture stream had reached when the reply last ended by itself (stream ms), or was cut off with a
    /// held utterance relayed (`TurnTaking+Relay`), if known; forgotten when the next reply starts and when the capture
    /// reopens (its positions start again).
    package internal(set) var replyEndHeardMs: Int?
    /// That reply's text: an utterance heard before `replyEndHeardMs` but reported after is judged against it.
    package internal(set) var replyEndSpoken = ""
    /// The hands-free mode in force (`TurnTaking+HandsFree`).
    package internal(set) var handsFree: HandsFree
    /// The Gateway's voice-wake triggers (`voicewake.get` / `voicewake.changed`), once known.
    package var gatewayWakePhrases: [String] = []
    /// Always-listening falls back to wake-phrase mode after this long without an interaction; nil: never.
    package internal(set) var idleTimeout: Duration?
    /// The push-to-talk capture holding the floor (`TurnTaking+PushToTalk`).
    package internal(set) var capture: Capture?
    /// How the last capture ended, for a command that comes after its end.
    package internal(set) var lastCapture: PushToTalkResult?
    /// A capture was cancelled while an utterance was open: its final is dropped.
    package internal(set) var dropNextFinal = false
    /// Approvals and notices waiting for the next pause, approvals first (`TurnTaking+Asking`).
    package internal(set) var waiting: [Waiting] = []
    /// The last prompt's number: a `promptSpoken` of an older one is stale.
    package internal(set) var prompts = 0
    /// The microphone's mode as last set (`TurnTaking+Microphone`); the owner's gate starts in it.
    package internal(set) var microphone: MicrophoneMode
    /// The loop's own voice plays without barge-in (a reply, a prompt), or its mute tail runs: the microphone is muted.
    var voiceMuted = false

    package init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
        handsFree = HandsFree(configuration.mode)
        idleTimeout = configuration.idleTimeout
        // Push-to-talk mode holds the microphone from the start.
        microphone = configuration.mode == .pushToTalk ? .held : .open
    }

    package var bargeInActive: Bool { interruptOnSpeech && !configuration.policy.forcedOff }

    /// The next partial may decide a barge-in: the reply plays and barge-in is on (the owner then has the listener
    /// report partials at `BargeInPolicy.Partials`' cadence).
    package var bargeInWaitsOnPartials: Bool {
        guard case .speaking = state else { return false }
        return bargeInActive
    }

    /// Where the loop rests between turns in its mode.
    var restingState: State { restsListening ? .listening : .resting }

    /// The user is speaking: a reply waits for the floor.
    package var userSpeaking: Bool { userSpeechStartNs != nil }

    package mutating func handle(_ event: Event) -> [Action] {
        let before = state.talkState
        // At a pause, what waits for one begins: an approval's question, or a notice.
        // The microphone follows what the event changed where no step set it on the way.
        let actions = dispatch(event) + atPause() + microphoneFollows()
        // Every state change starts the idle timeout again, unless the event already did.
        guard state.talkState != before, !actions.contains(where: \.isIdleTimer) else { return actions }
        return actions + idleTimer()
    }

    private mutating func dispatch(_ event: Event) -> [Action] {
        switch event {
        case .control(let command): control(command)
        case .speechStarted(let position, let atNs): speechStarted(position, atNs: atNs) + relayStarted(position)
        case .partial(let text, let atNs, let endMs): partial(text, atNs: atNs, endMs: endMs) + relayPartial(endMs: endMs)
        case .bargeInEvidence(let text, let evidence, let loud, let atNs):
            relayAfterWeighing(weighed(text, evidence, loudEnough: loud, atNs: atNs))
        case .speechEnded(let end, let closed, let endedNs): speechEnded(end, closed, endedNs: endedNs) + relayEnded(end)
        case .final(let text, let timing): heard(text, timing: timing)
        case .soundOnset(let positionMs, let lowered): relayHeard(onsetMs: positionMs) + soundOnset(loweredAtOnce: lowered)
        case .soundOverReply(let userSound): soundOverReply(userSound: userSound)
        case .playbackStarted(let sentence, let seconds, let atNs): playbackStarted(sentence, seconds: seconds, atNs: atNs)
        case .playbackStopped(let completed): playbackStopped(completed: completed)
        case .replySentences(let sentences): replySentences(sentences)
        case .replyEnded(let atNs, let heardToMs): endTurn(atNs: atNs, heardToMs: heardToMs)
        case .replyStopped(let heardToMs): relayReplyStopped(heardToMs: heardToMs)
        case .speechPastEcho(let throughMs, let heard): relaySpeechPastEcho(throughMs: throughMs, heard: heard)
        case .timerFired(let timer): timerFired(timer)
        case .pushToTalk(let command): pushToTalk(command)
        case .idleTimeoutChanged(let timeout): idleTimeoutChanged(timeout)
        case .connectionChanged(let description, let connected):
            [.emit(.connectionChanged(description))] + (connected && state != .idle ? [.announce(state.talkState.phase)] : [])
        case .noticeArrived(let text): noticeArrived(text)
        case .approvalArrived(let approval): approvalArrived(approval)
        case .approvalWithdrawn(let id): approvalWithdrawn(id)
        case .promptSpoken(let number): promptSpoken(number)
        case .answerHeard(let text, let confidence): answerHeard(text, confidence: confidence)
        case .decisionSent(let id, let failure): decisionSent(id, failure: failure)
        case .finalArriving: relayFinal()
        case .gatewayVoiceFailed(let turn, let reason): gatewayVoiceFailed(turn: turn, reason: reason)
        }
    }

    // MARK: - Control

    private mutating func control(_ command: ControlCommand) -> [Action] {
        switch command {
        case .activate:
            guard state == .idle else { return [] }
            replyEndHeardMs = nil
            relay.onsetsMs = []
            return beginHandsFree() + [.openMicrophone] + move(to: restingState, reason: "started")
        case .deactivate(let reason):
            guard state != .idle else { return [] }
            // The microphone first: nothing heard from now on becomes a turn.
            return [.closeMicrophone] + relayDropped() + quiet() + abandonAsking(all: true) + endHandsFree() + move(to: .idle, reason: reason.rawValue)
        case .pause:
            if state == .idle { return [.refuse(.talkOff)] }
            guard state != .paused else { return [] }
            // As Talk off, but the mode stays: an open capture is cancelled and a wake window shuts (the microphone
            // hears nothing now, and words after resume are not the request of a phrase said before the pause).
            return [.closeMicrophone] + relayDropped() + quiet() + abandonAsking(all: true) + endHandsFree() + move(to: .paused, reason: "paused")
        case .resume:
            if state == .idle { return [.refuse(.talkOff)] }
            guard state == .paused else { return [] }
            replyEndHeardMs = nil
            relay.onsetsMs = []
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

    /// The reply stops playing: without barge-in the microphone opens after the mute tail. Cut off (`atNs` nil: a
    /// typed turn, push-to-talk), a held utterance needs to know where it stopped in the capture stream
    /// (`relayReplyCut`).
    mutating func leaveSpeaking(atNs: UInt64?) -> [Action] {
        guard case .speaking(let turn, _, _) = state else { return [] }
        if let atNs { speakingEndedNs = atNs }
        let tail: [Action] = voiceMuted ? [.arm(.muteTail, configuration.policy.muteTail)] : []
        return tail + (atNs == nil ? relayReplyCut(spoken: turn.reply) : [])
    }

    // MARK: - Hearing

    private mutating func speechStarted(_ position: Int, atNs: UInt64) -> [Action] {
        userSpeechStartNs = atNs
        userSpeechPositionMs = position
        latestPartial = ""
        latestPartialEndMs = nil
        // Speech is an interaction: the idle timeout starts again.
        var actions: [Action] = [.emit(.speechStarted(positionMs: position)), .cancel(.evidenceRecheck)] + idleTimer()
        if case .asking = state { return actions + answerBegan() }
        guard case .speaking(let turn, let progress, let intrusion) = state else {
            // Its first voiced frame was heard while the reply still played: it opened over the reply, though the
            // reply has ended since. Judged in the capture stream alone, however late it is reported: the endpointer's
            // start window and a recogniser lagging on a busy machine report it seconds after that frame, later by the
            // clock than any fixed window after the reply's end (`replyEndHeardMs` is forgotten when the capture
            // reopens and its positions start again).
            openedOverReply = replyEndHeardMs.flatMap { position < $0 ? OpenedOverReply(spoken: replyEndSpoken) : nil }
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

    /// New words over the reply, when barge-in is on and the hands-free mode lets them cut in (in wake-phrase mode
    /// only words with the phrase), are weighed: the owner asks the devices for the evidence (`weighBargeIn`) and
    /// hands it back (`bargeInEvidence`).
    private mutating func partial(_ text: String, atNs: UInt64, endMs: Int?) -> [Action] {
        latestPartial = text
        latestPartialEndMs = endMs
        let actions: [Action] = [.emit(.partialTranscript(text)), .cancel(.evidenceRecheck)]
        guard handsFreeAllowsBargeIn(text), mayBargeIn(text) else { return actions }
        return actions + [.weighBargeIn(partial: text, fromPositionMs: userSpeechPositionMs, throughMs: endMs)]
    }

    /// The reply plays, barge-in is on, the user is speaking, and `text` holds words the reply has not played: its
    /// echo holds only the sentences that reached the speaker, and a user's word that a later sentence will say
    /// ("go for" against "… a light jacket for the evenings") held them 300 ms, for their next word.
    private func mayBargeIn(_ text: String) -> Bool {
        guard case .speaking(_, let progress, _) = state, bargeInActive, userSpeechStartNs != nil else { return false }
        return BargeInTextGuard.isNewSpeech(text, spoken: progress.played, minimumCharacters: configuration.policy.text.weighedFrom)
    }

    /// How soon a held partial is judged again (`BargeInPolicy.Partials.recheckEveryMs`).
    private var recheckInterval: Duration { .milliseconds(configuration.policy.partials.recheckEveryMs) }

    private mutating func weighed(_ text: String, _ evidence: BargeInEvidence, loudEnough: Bool, atNs: UInt64) -> [Action] {
        // The state may have moved while the devices were asked.
        guard mayBargeIn(text), case .speaking(_, let progress, let intrusion) = state, let startNs = userSpeechStartNs else { return [] }
        if let reason = configuration.policy.evidence.holdReason(evidence) {
            // Judged again shortly, while it is still the latest partial of the same utterance, over the frames heard
            // since: a user's "stop" whose first frames met the reply at full level shows as theirs once it is lowered.
            return [.held(partial: text, reason: reason), .arm(.evidenceRecheck, recheckInterval)]
        }
        // One letter short of the text guard ("go"): only on the canceller's word that the sound is the user's, which
        // may come once the lowered reply reaches the microphone (nothing to wait for without a measure).
        let guardPolicy = configuration.policy.text
        if !BargeInTextGuard.isNewSpeech(text, spoken: progress.played, minimumCharacters: guardPolicy.minimumNewCharacters),
           let reason = guardPolicy.shortPartialHoldReason(evidence) {
            return [.held(partial: text, reason: reason)] + (evidence.echoExplained == nil ? [] : [.arm(.evidenceRecheck, recheckInterval)])
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
        return actions + turnOver(.bargeIn, to: .listening)
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

    private mutating func timerFired(_ timer: Timer) -> [Action] {
        switch timer {
        case .onsetHold:
            return onsetHoldRanOut()
        case .muteTail:
            if case .asking = state { return answerOpens() }
            if case .speaking = state { return [] }
            return microphoneFollows(muting: false)
        case .replyTimeout:
            guard case .thinking = state else { return [] }
            let seconds = configuration.replyTimeout
            return [.cutReply(abort: false), .emit(.replyFailed("no reply within \(seconds)"))]
                + turnOver(.noReply, to: restingState)
        case .evidenceRecheck:
            // Through the latest frame, not the partial's end: the user's sound after their words is theirs too, and
            // the frames of their first word, said over the reply at full level, say only that it was loud.
            guard mayBargeIn(latestPartial) else { return [] }
            return [.weighBargeIn(partial: latestPartial, fromPositionMs: userSpeechPositionMs, throughMs: nil, recheck: true)]
        case .answerTimeout:
            return noAnswer()
        case .idle:
            return idled()
        case .wakeWindow:
            return wakeWindowRanOut()
        case .captureLimit:
            return captureLimitReached()
        case .captureCloseWait:
            return captureCloseWaitRanOut()
        }
    }

    // MARK: - Pieces

    /// Lowers the reply while the user may be cutting in (nothing when barge-in is off or the policy keeps the level).
    func lower(_ intrusion: inout Intrusion, reason: String) -> [Action] {
        guard bargeInActive, let gain = configuration.policy.lowering.gain, !intrusion.lowered else { return [] }
        intrusion.lowered = true
        return [.emit(.replyLevel(gain: Double(gain), reason: reason)), .setReplyGain(gain)]
    }

    /// The reply's level returns, and the intrusion is over.
    mutating func restore(reason: String) -> [Action] {
        guard case .speaking(let turn, let progress, let intrusion?) = state else { return [] }
        state = .speaking(turn, progress, nil)
        guard intrusion.lowered else { return [] }
        return [.cancel(.onsetHold), .emit(.replyLevel(gain: 1, reason: reason)), .setReplyGain(1)]
    }

    /// The turn is over: the loop moves where `reason` leaves it, and says why in both events.
    mutating func turnOver(_ reason: TurnEndReason, to new: State) -> [Action] {
        move(to: new, reason: reason.rawValue) + [.turnEnded(reason: reason)]
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
