import SessionBridge

/// Wake-phrase mode: an utterance is only sent when it holds a wake phrase (the Gateway's voice-wake triggers or
/// the local list), and then only what follows the phrase, or, when the phrase was said on its own, the next
/// utterance. Everything else is ignored, with an event saying so, and never leaves the machine.
extension TalkSession {
    /// The Gateway's voice-wake triggers (`VoiceWakeTracker`: `voicewake.get`, then each `voicewake.changed`).
    package func useGatewayWakePhrases(_ triggers: [String]) {
        handsFree.gatewayPhrases = triggers
    }

    /// The phrases listened for now.
    var wakePhrases: [String] { handsFree.gatewayPhrases + settings.wakePhrases }

    /// Whether what the microphone hears now may leave the machine (the transcription relay): always listening, yes;
    /// wake-phrase mode only once the phrase was found locally (the window it opens) or a push-to-talk capture holds
    /// the floor; push-to-talk only during a capture.
    var mayLeaveMachine: Bool {
        // An approval's answer is heard here only (the recogniser's grammar of the decisions).
        if asking { return false }
        if handsFree.capture != nil { return true }
        switch handsFree.mode {
        case .alwaysListening: return true
        case .wakePhrase: return handsFree.awake
        case .pushToTalk: return false
        }
    }

    /// Where the loop rests between turns in the current mode (`TurnTaking.restsListening`): listening while
    /// always-listening, a wake window is open or a capture holds the floor; otherwise waiting.
    var restsListening: Bool {
        handsFree.capture != nil || handsFree.awake || handsFree.mode == .alwaysListening
    }

    /// Sets the mode up as the session starts (after the listener, before the first event is heard).
    func beginHandsFree() {
        handsFree.mode = settings.mode
        gate.setHeld(settings.mode == .pushToTalk)
        emit(.modeChanged(from: nil, to: settings.mode, reason: "started"))
    }

    func endHandsFree() {
        timers.cancel(.idle)
        closeWakeWindowNow()
        timers.cancel(.captureLimit)
        timers.cancel(.captureCloseWait)
        if let capture = handsFree.capture {
            handsFree.capture = nil
            let result = PushToTalkResult(captureId: capture.id, status: .cancelled)
            for waiter in capture.waiters { waiter.resume(returning: result) }
        }
    }

    /// What a final transcript sends, if anything: nil when the mode keeps it (collected by a push-to-talk capture,
    /// or ignored without a wake phrase); otherwise the text for the usual checks and the turn.
    func admit(_ text: String) async -> String? {
        if handsFree.capture != nil {
            await heardDuringCapture(text)
            return nil
        }
        if handsFree.dropNext {
            handsFree.dropNext = false
            emit(.transcriptIgnored(text: text, reason: "push-to-talk was cancelled"))
            return nil
        }
        guard state != .speaking, !text.isEmpty else { return text }
        switch handsFree.mode {
        case .alwaysListening:
            return text
        case .pushToTalk:
            emit(.transcriptIgnored(text: text, reason: "push-to-talk is not capturing"))
            await handle(.settle(reason: "push-to-talk"))
            return nil
        case .wakePhrase:
            return await admitAfterWakePhrase(text)
        }
    }

    private func admitAfterWakePhrase(_ text: String) async -> String? {
        if handsFree.awake {
            closeWakeWindowNow()
            return text
        }
        guard let match = WakePhraseMatcher.match(text, phrases: wakePhrases) else {
            emit(.transcriptIgnored(text: text, reason: "no wake phrase"))
            await handle(.settle(reason: "no wake phrase"))
            return nil
        }
        emit(.wakePhrase(phrase: match.phrase, command: match.command))
        if handsFree.idledOut {
            handsFree.idledOut = false
            handsFree.mode = .alwaysListening
            emit(.modeChanged(from: .wakePhrase, to: .alwaysListening, reason: "wake phrase"))
        }
        guard match.command.isEmpty else { return match.command }
        if handsFree.mode == .wakePhrase { openWakeWindow() }
        // Woken again while the agent thinks: as a new request would, this drops the reply on its way.
        await handle(.woken)
        rearmIdleTimer()
        return nil
    }

    /// A wake phrase on its own: the next utterance is taken if it starts within `wakeFollowUp`.
    private func openWakeWindow() {
        handsFree.awake = true
        arm(.wakeWindow, settings.wakeFollowUp)
    }

    func closeWakeWindowNow() {
        handsFree.awake = false
        timers.cancel(.wakeWindow)
    }

    /// `Timer.wakeWindow`: nothing began within the window.
    func closeWakeWindow() async {
        guard handsFree.awake else { return }
        // Speech that began in time is taken when its final comes; if that final is empty, the window shuts after.
        guard !machine.userSpeaking else { return arm(.wakeWindow, Self.wakeWindowRecheck) }
        handsFree.awake = false
        await handle(.settle(reason: "nothing said after the wake phrase"))
    }

    /// How often a wake window that shut while speech was going on looks again for that speech's end.
    static let wakeWindowRecheck: Duration = .seconds(1)

    /// Barge-in in wake-phrase mode needs the phrase in the words that cut in: other speech is not for the agent.
    func bargeInAllowed(_ partial: String) -> Bool {
        guard handsFree.mode == .wakePhrase, !handsFree.awake, handsFree.capture == nil else { return true }
        return WakePhraseMatcher.match(partial, phrases: wakePhrases) != nil
    }
}
