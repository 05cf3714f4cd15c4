import SessionBridge

/// What the loop takes as meant for the agent (`HandsFreeMode`), decided on each final: always-listening takes
/// every utterance; wake-phrase mode only what follows a wake phrase (in the same utterance, or the next one when the
/// phrase was said on its own and `Timer.wakeWindow` has not shut the window); push-to-talk only what a capture
/// hears. Always-listening that hears nothing for `idleTimeout` falls back to wake-phrase mode (`Timer.idle`), and a
/// wake phrase brings it back. Everything not taken is ignored with an event and never leaves the machine.
extension TurnTaking {
    /// The hands-free mode in force, with what it carries.
    package enum HandsFree: Sendable, Equatable {
        case alwaysListening
        /// `windowOpen`: a wake phrase said on its own, and the next utterance is taken (until `Timer.wakeWindow`).
        /// `idledOut`: here because always-listening idled out; a wake phrase brings always-listening back.
        case wakePhrase(windowOpen: Bool, idledOut: Bool)
        case pushToTalk

        init(_ mode: HandsFreeMode) {
            switch mode {
            case .alwaysListening: self = .alwaysListening
            case .wakePhrase: self = .wakePhrase(windowOpen: false, idledOut: false)
            case .pushToTalk: self = .pushToTalk
            }
        }

        package var mode: HandsFreeMode {
            switch self {
            case .alwaysListening: .alwaysListening
            case .wakePhrase: .wakePhrase
            case .pushToTalk: .pushToTalk
            }
        }

        var windowOpen: Bool {
            if case .wakePhrase(true, _) = self { true } else { false }
        }
    }

    /// How often a wake window that ran out while speech was going on looks again for that speech's end.
    static let wakeWindowRecheck: Duration = .seconds(1)

    /// The phrases listened for now: the Gateway's voice-wake triggers, then the local ones.
    var wakePhrases: [String] { gatewayWakePhrases + configuration.wakePhrases }

    /// Where the loop rests between turns in the current mode: listening while always-listening, a wake window is
    /// open or a capture holds the floor; otherwise waiting.
    var restsListening: Bool { capture != nil || handsFree.windowOpen || handsFree == .alwaysListening }

    /// Whether what the microphone hears now may leave the machine (the transcription relay): always-listening,
    /// yes; wake-phrase mode only in the window a phrase found locally opened; otherwise only during a capture. An
    /// approval's answer never (the recogniser's grammar of the decisions hears it here).
    package var mayLeaveMachine: Bool {
        if case .asking = state { return false }
        return capture != nil || handsFree == .alwaysListening || handsFree.windowOpen
    }

    /// Barge-in in wake-phrase mode needs the phrase in the words that cut in: other speech is not for the agent.
    func handsFreeAllowsBargeIn(_ partial: String) -> Bool {
        guard handsFree.mode == .wakePhrase, !handsFree.windowOpen, capture == nil else { return true }
        return WakePhraseMatcher.match(partial, phrases: wakePhrases) != nil
    }

    /// Talk comes on: the configured mode begins (an idle fall-back or an open window of an earlier run is gone).
    mutating func beginHandsFree() -> [Action] {
        handsFree = HandsFree(configuration.mode)
        return [.emit(.modeChanged(from: nil, to: configuration.mode, reason: "started"))]
    }

    /// Talk goes off or pauses: the mode's timers stop, a wake window shuts, and a capture open is cancelled.
    mutating func endHandsFree() -> [Action] {
        var actions: [Action] = cancelOpenCapture() + (idleTimeout == nil ? [] : [.cancel(.idle)])
        if case .wakePhrase(true, let idledOut) = handsFree {
            handsFree = .wakePhrase(windowOpen: false, idledOut: idledOut)
            actions.append(.cancel(.wakeWindow))
        }
        return actions
    }

    // MARK: - Finals

    /// A final as the recogniser (or the relay) gave it: the mode decides what of it, if anything, is meant for the
    /// agent. While the reply plays, or when it is empty, it goes on as it is (`final` ignores it then).
    mutating func heard(_ text: String, timing: HeardTiming?) -> [Action] {
        if case .asking = state { return answerHeard(text, confidence: nil) }
        // A capture holding the floor collects it.
        if capture != nil { return kept() + heardDuringCapture(text) }
        if dropNextFinal {
            dropNextFinal = false
            return kept() + [.emit(.transcriptIgnored(text: text, reason: "push-to-talk was cancelled"))]
        }
        guard state.talkState != .speaking, !text.isEmpty else { return final(text, timing: timing) }
        switch handsFree {
        case .alwaysListening:
            return final(text, timing: timing)
        case .pushToTalk:
            return kept() + [.emit(.transcriptIgnored(text: text, reason: "push-to-talk is not capturing"))] + settle("push-to-talk")
        case .wakePhrase(true, let idledOut):
            // The request after a phrase said on its own: the window has done its work.
            handsFree = .wakePhrase(windowOpen: false, idledOut: idledOut)
            return [.cancel(.wakeWindow)] + final(text, timing: timing)
        case .wakePhrase(false, let idledOut):
            return afterWakePhrase(text, idledOut: idledOut)
        }
    }

    private mutating func afterWakePhrase(_ text: String, idledOut: Bool) -> [Action] {
        guard let match = WakePhraseMatcher.match(text, phrases: wakePhrases) else {
            return kept() + [.emit(.transcriptIgnored(text: text, reason: "no wake phrase"))] + settle("no wake phrase")
        }
        var actions: [Action] = [.emit(.wakePhrase(phrase: match.phrase, command: match.command))]
        if idledOut {
            handsFree = .alwaysListening
            actions.append(.emit(.modeChanged(from: .wakePhrase, to: .alwaysListening, reason: "wake phrase")))
        }
        // The words after the phrase are the request (the timing is of the whole utterance: not theirs).
        guard match.command.isEmpty else { return actions + final(match.command, timing: nil) }
        if handsFree.mode == .wakePhrase {
            handsFree = .wakePhrase(windowOpen: true, idledOut: false)
            actions.append(.arm(.wakeWindow, configuration.wakeFollowUp))
        }
        // Woken again while the agent thinks: as a new request would, this drops the reply on its way.
        return kept() + actions + woken() + idleTimer()
    }

    /// A final the mode keeps: no turn, and the utterance is over.
    mutating func kept() -> [Action] {
        userSpeechStartNs = nil
        openedOverReply = nil
        return []
    }

    /// A wake phrase said on its own: the loop listens; a turn still thinking is dropped, as a new request would.
    private mutating func woken() -> [Action] {
        switch state {
        case .thinking:
            return [.cutReply(abort: false), .cancel(.replyTimeout)] + turnOver(.wakePhrase, to: .listening)
        case .listening, .resting:
            return move(to: .listening, reason: "wake phrase")
        default:
            return []
        }
    }

    /// The mode has nothing to take now: a loop listening goes where it rests.
    mutating func settle(_ reason: String) -> [Action] {
        guard state == .listening || state == .resting else { return [] }
        return move(to: restingState, reason: reason)
    }

    // MARK: - Timers

    /// `Timer.wakeWindow`: nothing began within the window after a lone phrase. Speech that began in time is taken
    /// when its final comes (and an empty final lets the window shut at the next look).
    mutating func wakeWindowRanOut() -> [Action] {
        guard case .wakePhrase(true, let idledOut) = handsFree else { return [] }
        if userSpeaking { return [.arm(.wakeWindow, Self.wakeWindowRecheck)] }
        handsFree = .wakePhrase(windowOpen: false, idledOut: idledOut)
        return settle("nothing said after the wake phrase")
    }

    /// Whether the idle timeout runs: always-listening waiting in `listening`, no capture open. Not while an
    /// approval's answer is listened for (that step is `listening` too): the user was just asked something.
    private var idles: Bool { handsFree == .alwaysListening && state == .listening && capture == nil }

    /// The idle timer started again (any speech, a turn, a wake phrase, every state change), or stopped where it
    /// does not run. Nothing without an idle timeout: then it never runs.
    func idleTimer() -> [Action] {
        guard let timeout = idleTimeout else { return [] }
        return idles ? [.arm(.idle, timeout)] : [.cancel(.idle)]
    }

    /// `Timer.idle`: always-listening heard nothing for the timeout and falls back to wake-phrase mode.
    mutating func idled() -> [Action] {
        guard let timeout = idleTimeout, idles else { return [] }
        // Someone is speaking (a long utterance): not idle.
        if userSpeaking { return idleTimer() }
        handsFree = .wakePhrase(windowOpen: false, idledOut: true)
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let shown = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
        return [.emit(.modeChanged(from: .alwaysListening, to: .wakePhrase, reason: "no interaction for \(shown) s"))]
            + settle("idle timeout")
    }

    mutating func idleTimeoutChanged(_ timeout: Duration?) -> [Action] {
        idleTimeout = timeout
        return timeout == nil ? [.cancel(.idle)] : idleTimer()
    }
}

extension TurnTaking.Action {
    /// Arms or cancels `Timer.idle`.
    var isIdleTimer: Bool {
        switch self {
        case .arm(.idle, _), .cancel(.idle): true
        default: false
        }
    }
}
