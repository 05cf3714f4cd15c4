import AudioIO
import Foundation
import SessionBridge
import SpeechRecognition
import SpeechSynthesis
import TalkLogging

/// The Talk loop: listening → a final transcript goes out → thinking → the reply is spoken sentence by sentence
/// as it streams in → listening. The actor owns the state; the microphone never stops (so the user can cut in,
/// or start the next turn while the agent thinks), and what it hears is read against the state.
///
/// Turns are fenced by `turn`: a new transcript, a barge-in or `stop()` bumps it, and work of an older turn (a
/// reply still streaming, a sentence being synthesised) finds itself stale and ends without a word spoken.
package actor TalkSession {
    package nonisolated let events: AsyncStream<TalkEvent>
    let eventSink: AsyncStream<TalkEvent>.Continuation
    let dependencies: Dependencies
    var settings: Settings
    /// `settings.bargeIn`, fixed for the session's life.
    let bargeIn: BargeInPolicy
    /// `talk.config`'s `interruptOnSpeech` (on until it says otherwise); `--no-barge-in` overrides it.
    var interruptOnSpeech = true
    let logger: Logger
    nonisolated let gate: MicrophoneGate
    var originNs: UInt64

    package private(set) var state: TalkState = .idle
    var listener: (any TalkListener)?
    var listenTask: Task<Void, Never>?
    var announcements: AsyncStream<TalkPhase>.Continuation?
    var announcer: Task<Void, Never>?

    /// The current turn; older turns' work is stale.
    var turn = 0
    var turnTask: Task<Void, Never>?
    /// What the current reply has said so far (the text guard compares partials with it).
    var replyText = ""
    /// Seconds of the current reply already heard, and the sentence playing now (since when, how long).
    var spokenSeconds = 0.0
    var playing: (startNs: UInt64, seconds: Double)?
    /// The user is speaking (an utterance opened and not yet closed), and since when.
    var userSpeechStartNs: UInt64?
    /// Where that utterance starts in the capture stream (its first voiced frame).
    var userSpeechPositionMs = 0
    /// A partial held because the reply's echo explained the utterance so far is judged again shortly (its frames
    /// go on coming while its words may not change): the latest partial (`Timer.evidenceRecheck` judges it).
    var latestPartial = ""
    /// What the reply had said when the current utterance opened while it played, until that utterance
    /// interrupts it; nil for one that opened in silence or did interrupt.
    var openedOverReply: String?
    /// That utterance's speech ended before the reply did: it lay wholly within a reply it did not interrupt.
    var endedWithinReply = false
    /// The utterance being spoken goes to the transcript source (the relay): decided as it opens (`mayLeaveMachine`).
    var relayingUtterance = false
    /// When the session last stopped speaking.
    var speakingEndedNs: UInt64?
    /// The reply plays lowered (`BargeInPolicy.Lowering`) while the user may be cutting in.
    var replyLowered = false
    var onsetTask: Task<Void, Never>?
    /// Every timer of the loop, by name (`TurnTaking.Timer`).
    var timers = NamedTimers()
    /// A reply waiting for the user to finish before it may speak.
    var floorWaiters: [CheckedContinuation<Void, Never>] = []
    /// The offset a barge-in cut the last reply at; the next transcript carries it.
    var pendingInterruption: Double?
    /// The turn whose Gateway voice failed: its later sentences use the local voice.
    var gatewayVoiceFailedTurn: Int?
    /// The current turn's sentences being synthesised (`talk.speak` or the local voice): cancelled with the turn.
    var turnSynthesis: [Task<SpokenAudio, any Error>] = []
    /// The current turn's sentences waiting for their synthesis to start (`SpeechLookahead`).
    var lookahead = SpeechLookahead()
    /// Wake phrase, push-to-talk and idle timeout (`HandsFreeMode`).
    var handsFree = HandsFreeState()

    package init(dependencies: Dependencies, settings: Settings = Settings(), logger: Logger) {
        self.dependencies = dependencies
        self.settings = settings
        bargeIn = settings.bargeIn
        self.logger = logger
        gate = MicrophoneGate(dependencies.capture, energy: settings.bargeIn.energy)
        originNs = dependencies.clock.nowNs()
        (events, eventSink) = AsyncStream.makeStream(of: TalkEvent.self, bufferingPolicy: .unbounded)
    }

    /// Starts listening and returns; the loop runs until `stop()`. With `listening: false` Talk stays off (no
    /// microphone, no `talk.mode`) until `activate()` (the daemon's `talk start`).
    package func start(listening: Bool = true) async throws {
        originNs = dependencies.clock.nowNs()
        listener = try dependencies.makeListener(gate)
        let onsets = gate.soundOnsets
        onsetTask = Task { [weak self] in
            for await _ in onsets { await self?.soundOverReply() }
        }
        guard listening else { return }
        startAnnouncer()
        try await openMicrophone(starting: true)
    }

    /// Ends the session: the reply stops at once, the Gateway is told Talk mode is off (after the phases before
    /// it), and the event stream ends. A transcript not yet acknowledged stays in the conversation's outbox.
    package func stop() async {
        // The microphone first: nothing heard from now on becomes a turn. The cut sentence reports itself
        // stopped before the session says it is idle.
        await closeMicrophone()
        await quiet()
        onsetTask?.cancel()
        await dependencies.transcriptSource?.stop()
        releaseFloor()
        endHandsFree()
        timers.cancelAll()
        setState(.idle, reason: "stopped")
        announcements?.finish()
        await announcer?.value
        if let announce = dependencies.announce { await announce(false, nil) }
        eventSink.finish()
    }

    /// What `talk.config` says: barge-in (unless forced off) and whether the Gateway's voice speaks.
    package func apply(_ config: TalkConfig) {
        if let interrupt = config.interruptOnSpeech { interruptOnSpeech = interrupt }
        settings.useGatewayVoice = config.provider != nil && dependencies.gatewayVoice != nil
        applyGatewayVoice(config)
        applyIdleTimeout(config)
    }

    /// A Gateway connection changed state (reported by whoever runs the connection). On a connect the current
    /// phase is announced again: a notice sent while the socket was down was lost.
    package func connectionChanged(_ description: String, connected: Bool) {
        emit(.connectionChanged(description))
        if connected, state != .idle { announcements?.yield(state.phase) }
    }

    // MARK: - Hearing

    func listen(_ utterances: AsyncStream<UtteranceEvent>) async {
        for await event in utterances {
            await hear(event)
        }
        guard !Task.isCancelled, state != .idle else { return }
        emit(.microphone("the input ended; the session goes on without it"))
    }

    private func hear(_ event: UtteranceEvent) async {
        switch event {
        case .speechStarted(let position):
            userSpeechStartNs = dependencies.clock.nowNs()
            userSpeechPositionMs = position
            openedOverReply = state == .speaking ? replyText : nil
            endedWithinReply = false
            timers.cancel(.evidenceRecheck)
            emit(.speechStarted(positionMs: position))
            if openedOverReply != nil { await lowerReply(reason: "an utterance opened over the reply") }
            rearmIdleTimer()
            await relayUtteranceStarted(position)
        case .partial(let text):
            emit(.partialTranscript(text))
            latestPartial = text
            timers.cancel(.evidenceRecheck)
            await considerBargeIn(text)
        case .speechEnded(let end, let closed):
            emit(.speechEnded(lastSpeechEndMs: end, closedAtMs: closed))
            if openedOverReply != nil {
                // The speech ended the silence window ago; the reply may have ended since.
                let endedNs = dependencies.clock.nowNs() &- UInt64(max(0, closed - end)) * 1_000_000
                endedWithinReply = state == .speaking || speakingEndedNs.map { endedNs <= $0 } ?? false
            }
            await restoreReply(reason: "the utterance closed")
            await relayUtteranceEnded(end)
        case .final(let result):
            let (chosen, engine) = await relayedFinal(result)
            heardFinal(chosen, engine: engine)
        case .interrupted(let reason):
            emit(.microphone("lost: \(reason)"))
        case .resumed(let device):
            emit(.microphone("listening again on \(device)"))
        case .finished:
            emit(.microphone("the input file ended"))
        case .failed(let message):
            emit(.error("recognition stopped: \(message)"))
        }
    }

    private func heardFinal(_ result: UtteranceResult, engine: String? = nil) {
        userSpeechStartNs = nil
        let overReply = openedOverReply
        let withinReply = endedWithinReply
        openedOverReply = nil
        endedWithinReply = false
        let heard = result.hypothesis.text.trimmingCharacters(in: .whitespacesAndNewlines)
        emit(.finalTranscript(text: heard, engine: engine ?? dependencies.engine, startMs: result.startMs, endMs: result.endMs,
                              endToFinalMs: result.endToFinalMs))
        guard let text = admit(heard) else { return releaseFloor() }
        if text.isEmpty {
            emit(.transcriptIgnored(text: text, reason: "empty transcript"))
            releaseFloor()
            return
        }
        if state == .speaking {
            // Barge-in did not fire: the reply's own echo, or speech the guards let pass. Never a new turn.
            emit(.transcriptIgnored(text: text, reason: "heard while the reply played, without interrupting it"))
            releaseFloor()
            return
        }
        if overReply != nil, withinReply {
            // Spoken wholly over a reply it did not interrupt (the guards held it), its final only came after
            // the silence window: on the loopback, the reply's echo recognised as "cool".
            emit(.transcriptIgnored(text: text, reason: "heard while the reply played, without interrupting it"))
            releaseFloor()
            return
        }
        if let spoken = overReply, !BargeInTextGuard.isNewSpeech(text, spoken: spoken, minimumCharacters: bargeIn.text.minimumNewCharacters) {
            // It opened on the reply's echo and went on after the reply ended: without words the reply did not
            // hold (the text guard's test), it is the echo's tail, not a turn.
            emit(.transcriptIgnored(text: text, reason: "opened while the reply played, with no words of the user's own"))
            releaseFloor()
            return
        }
        // The user spoke again: a reply still on its way or held for them is dropped, the new words go out.
        let offset = pendingInterruption
        pendingInterruption = nil
        cancelTurn()
        releaseFloor()
        startTurn(text, interruptedAtSeconds: offset)
    }

    // MARK: - Barge-in

    private func considerBargeIn(_ partial: String) async {
        guard state == .speaking, bargeInActive, let startNs = userSpeechStartNs,
              BargeInTextGuard.isNewSpeech(partial, spoken: replyText, minimumCharacters: bargeIn.text.minimumNewCharacters),
              bargeInAllowed(partial) else { return }
        let speechMs = Int((dependencies.clock.nowNs() &- startNs) / 1_000_000)
        let generation = turn
        let heard = await gate.bargeInEvidence(fromPositionMs: userSpeechPositionMs)
        guard generation == turn, state == .speaking else { return }
        let evidence = BargeInEvidence(echoExplained: heard.echoExplained, speechMs: speechMs, startedBeforeReplyAudio: heard.startedBeforeReplyAudio)
        if let reason = bargeIn.evidence.holdReason(evidence) {
            logger.debug("barge-in held: \(reason)", metadata: ["talk.partial": "\(partial.prefix(80))"])
            // Judged again shortly, while it is still the latest of the same utterance: a user's "stop" whose first
            // frames met the reply at full level is explained less once it is lowered.
            arm(.evidenceRecheck, BargeInEvidenceMeter.recheck)
            return
        }
        guard await gate.hearsSpeech else {
            logger.debug("barge-in held: the words are not loud enough over the noise floor and the reply's echo",
                         metadata: ["talk.partial": "\(partial.prefix(80))"])
            return
        }
        guard generation == turn, state == .speaking else { return }
        let now = dependencies.clock.nowNs()
        let offset = spokenSeconds + (playing.map { min($0.seconds, Double(now &- $0.startNs) / 1e9) } ?? 0)
        cancelTurn()
        dependencies.synthesizer.cancelAll()
        pendingInterruption = offset
        openedOverReply = nil
        emit(.bargeIn(offsetSeconds: offset, detectionLatencyMs: Double(now &- startNs) / 1e6, partial: partial))
        if replyLowered {
            // Stopping the speaker returns its level.
            replyLowered = false
            emit(.replyLevel(gain: 1, reason: "the reply was cut off"))
        }
        setState(.listening, reason: "barge-in")
        emit(.turnEnded(reason: "barge-in"))
        await dependencies.playback.stop()
        await abortReply()
    }

    /// The microphone turned loud while the reply plays: perhaps the user cutting in. The reply is lowered at
    /// once, 200 to 500 ms before the endpointer can tell speech from a knock, so the user's first words already
    /// meet less echo; if no utterance opens within `BargeInPolicy.Lowering.onsetHold`, it was not them and the
    /// level returns.
    func soundOverReply() async {
        guard state == .speaking, userSpeechStartNs == nil, !replyLowered else { return }
        await lowerReply(reason: "sound over the reply")
        guard replyLowered else { return }
        arm(.onsetHold, bargeIn.lowering.onsetHold)
    }

    /// An utterance opened over the reply, or sound that may be one: until it interrupts or closes, the reply
    /// plays lowered. Called again for the utterance after its onset, it keeps the level and ends the onset's wait.
    private func lowerReply(reason: String) async {
        guard bargeInActive, let gain = bargeIn.lowering.gain else { return }
        timers.cancel(.onsetHold)
        guard !replyLowered else { return }
        replyLowered = true
        emit(.replyLevel(gain: Double(gain), reason: reason))
        await dependencies.playback.setGain(gain)
    }

    private func restoreReply(reason: String) async {
        guard replyLowered else { return }
        timers.cancel(.onsetHold)
        replyLowered = false
        emit(.replyLevel(gain: 1, reason: reason))
        await dependencies.playback.setGain(1)
    }

    // MARK: - State

    func setState(_ new: TalkState, reason: String) {
        guard new != state else { return }
        let old = state
        state = new
        if old == .speaking { speakingEndedNs = dependencies.clock.nowNs() }
        emit(.stateChanged(from: old, to: new, reason: reason))
        rearmIdleTimer()
        if new != .idle { announcements?.yield(new.phase) }
        if !bargeInActive {
            if new == .speaking {
                timers.cancel(.muteTail)
                gate.setMuted(true)
            } else if old == .speaking {
                arm(.muteTail, bargeIn.muteTail)
            }
        }
    }

    /// The mute tail ran out: the microphone opens unless the reply speaks again.
    private func muteTailEnded() {
        guard state != .speaking else { return }
        gate.setMuted(false)
    }

    // MARK: - Timers

    func arm(_ timer: TurnTaking.Timer, _ delay: Duration) {
        timers.arm(timer, after: delay, clock: dependencies.clock) { [weak self] id in await self?.fire(timer, id: id) }
    }

    private func fire(_ timer: TurnTaking.Timer, id: Int) async {
        guard timers.take(timer, id: id) else { return }
        switch timer {
        case .onsetHold: await restoreReply(reason: "no utterance followed the sound")
        case .muteTail: muteTailEnded()
        case .replyTimeout: replyTimedOut()
        case .idle: idled()
        case .wakeWindow: closeWakeWindow()
        case .captureLimit: await captureLimitReached()
        case .captureCloseWait: if let id = handsFree.capture?.id { finishCapture(id) }
        case .evidenceRecheck:
            guard userSpeechStartNs != nil else { return }
            await considerBargeIn(latestPartial)
        }
    }

    /// Speech over the reply may stop it: `talk.config` allows it and `--no-barge-in` was not given.
    var bargeInActive: Bool { interruptOnSpeech && !bargeIn.forcedOff }

    func emit(_ kind: TalkEvent.Kind) {
        let now = dependencies.clock.nowNs()
        eventSink.yield(TalkEvent(wallTime: dependencies.clock.wallNow(), monotonicMs: Int64((now &- originNs) / 1_000_000), kind: kind))
        switch kind {
        case .error(let message), .replyFailed(let message), .voiceFallback(let message):
            logger.warning("\(message)")
        default:
            break
        }
    }

    /// Suspends while the user is speaking, so a reply is never spoken over them.
    func waitForFloor() async {
        guard userSpeechStartNs != nil else { return }
        await withCheckedContinuation { floorWaiters.append($0) }
    }

    func releaseFloor() {
        let waiters = floorWaiters
        floorWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}
