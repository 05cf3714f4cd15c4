import AudioIO
import Foundation
import SessionBridge
import SpeechRecognition
import SpeechSynthesis
import TalkLogging

/// The Talk loop: listening → a final transcript goes out → thinking → the reply is spoken sentence by sentence
/// as it streams in → listening. Who has the floor is `TurnTaking`'s to decide (a value, no I/O): the actor feeds
/// it what it hears and what its work reports, and carries out the actions it returns (`TalkSession+Actions`).
/// The actor keeps the tasks, the devices and the hands-free bookkeeping; the microphone never stops (so the user
/// can cut in, or start the next turn while the agent thinks), and what it hears is read against the state.
///
/// Turns' work is fenced by `turn`: a new transcript, a barge-in or `stop()` bumps it, and work of an older turn
/// (a reply still streaming, a sentence being synthesised) finds itself stale and ends without a word spoken.
package actor TalkSession {
    package nonisolated let events: AsyncStream<TalkEvent>
    let eventSink: AsyncStream<TalkEvent>.Continuation
    let dependencies: Dependencies
    var settings: Settings
    /// `settings.bargeIn`, fixed for the session's life.
    let bargeIn: BargeInPolicy
    let logger: Logger
    nonisolated let gate: MicrophoneGate
    var originNs: UInt64

    /// Who has the floor, and what the turn is.
    var machine: TurnTaking
    package var state: TalkState { machine.state.talkState }
    var listener: (any TalkListener)?
    var listenTask: Task<Void, Never>?
    /// The microphone's stream, opened and not yet read (`Action.openMicrophone` starts reading it).
    var opened: AsyncStream<UtteranceEvent>?
    var announcements: AsyncStream<TalkPhase>.Continuation?
    var announcer: Task<Void, Never>?

    /// The current turn's work; older turns' work is stale.
    var turn = 0
    var turnTask: Task<Void, Never>?
    var onsetTask: Task<Void, Never>?
    /// Every timer of the loop, by name (`TurnTaking.Timer`).
    var timers = NamedTimers()
    /// A reply waiting for the user to finish before it may speak.
    var floorWaiters: [CheckedContinuation<Void, Never>] = []
    /// The utterance being spoken goes to the transcript source (the relay): decided as it opens (`mayLeaveMachine`).
    var relayingUtterance = false
    /// Where the audio of the latest partial ends (stream ms): barge-in's energy guard judges that audio.
    var latestPartialEndMs: Int?
    /// The turn whose Gateway voice failed: its later sentences use the local voice.
    var gatewayVoiceFailedTurn: Int?
    /// The current turn's sentences being synthesised (`talk.speak` or the local voice): cancelled with the turn.
    var turnSynthesis: [Task<SpokenAudio, any Error>] = []
    /// The current turn's sentences waiting for their synthesis to start (`SpeechLookahead`).
    var lookahead = SpeechLookahead()
    /// Wake phrase, push-to-talk and idle timeout (`HandsFreeMode`).
    var handsFree = HandsFreeState()
    /// The loop's own words playing (a notice, an approval's question): `TalkSession+Asking`.
    var promptTask: Task<Void, Never>?
    /// Where the approval asked about is decided (given with each `ask`).
    var approvalAnswers: (any ApprovalAnswers)?

    package init(dependencies: Dependencies, settings: Settings = Settings(), logger: Logger) {
        self.dependencies = dependencies
        self.settings = settings
        bargeIn = settings.bargeIn
        self.logger = logger
        gate = MicrophoneGate(dependencies.capture, energy: settings.bargeIn.energy)
        var turnTaking = TurnTaking.Configuration()
        turnTaking.policy = settings.bargeIn
        turnTaking.mode = settings.mode
        turnTaking.replyTimeout = settings.replyTimeout
        machine = TurnTaking(turnTaking)
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
        if state != .idle {
            await handle(.control(.deactivate(reason: "stopped")))
        } else {
            await closeMicrophone()
            await quiet()
        }
        onsetTask?.cancel()
        await dependencies.transcriptSource?.stop()
        releaseFloor()
        endHandsFree()
        timers.cancelAll()
        announcements?.finish()
        await announcer?.value
        if let announce = dependencies.announce { await announce(false, nil) }
        eventSink.finish()
    }

    /// What `talk.config` says: barge-in (unless forced off) and whether the Gateway's voice speaks.
    package func apply(_ config: TalkConfig) {
        if let interrupt = config.interruptOnSpeech { machine.interruptOnSpeech = interrupt }
        settings.useGatewayVoice = config.provider != nil && dependencies.gatewayVoice != nil
        applyGatewayVoice(config)
        applyIdleTimeout(config)
    }

    /// A Gateway connection changed state (reported by whoever runs the connection). On a connect the current
    /// phase is announced again: a notice sent while the socket was down was lost.
    package func connectionChanged(_ description: String, connected: Bool) async {
        await handle(.connectionChanged(description, connected: connected))
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
        let now = dependencies.clock.nowNs()
        switch event {
        case .speechStarted(let position):
            await handle(.speechStarted(positionMs: position, atNs: now))
            rearmIdleTimer()
            await relayUtteranceStarted(position)
        case .partial(let text, let endMs):
            latestPartialEndMs = endMs
            await handle(.partial(text, mayInterrupt: bargeInAllowed(text), atNs: now))
        case .speechEnded(let end, let closed):
            // The speech ended the silence window ago; the reply may have ended since.
            let endedNs = now &- UInt64(max(0, closed - end)) * 1_000_000
            await handle(.speechEnded(lastSpeechEndMs: end, closedAtMs: closed, endedNs: endedNs))
            await relayUtteranceEnded(end)
        case .final(let result):
            let (chosen, engine) = await relayedFinal(result)
            await heardFinal(chosen, engine: engine)
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

    private func heardFinal(_ result: UtteranceResult, engine: String? = nil) async {
        let heard = result.hypothesis.text.trimmingCharacters(in: .whitespacesAndNewlines)
        emit(.finalTranscript(text: heard, engine: engine ?? dependencies.engine, startMs: result.startMs, endMs: result.endMs,
                              endToFinalMs: result.endToFinalMs))
        // An approval's answer is the machine's alone: no wake phrase needed, no capture collects it.
        if asking {
            await handle(.answerHeard(heard, confidence: result.hypothesis.confidence))
            return
        }
        // The hands-free mode first: a capture collects it, wake-phrase mode takes only what follows the phrase.
        if let text = await admit(heard) {
            var timing: TurnTaking.HeardTiming?
            if text == heard { timing = await heardTiming(of: result) }
            await handle(.final(text, timing: timing))
        } else {
            await handle(.finalKept)
        }
    }

    /// The final's words in stream time, and where the user's own sound began in its utterance.
    private func heardTiming(of result: UtteranceResult) async -> TurnTaking.HeardTiming {
        let words = result.hypothesis.words.map {
            TurnTaking.HeardTiming.Word($0.word, startMs: result.audioStartMs + $0.startMs, endMs: result.audioStartMs + $0.endMs)
        }
        return TurnTaking.HeardTiming(words: words, userSound: await gate.userSound(fromPositionMs: result.startMs))
    }

    /// The microphone turned loud while the reply plays: perhaps the user cutting in. The reply is lowered at
    /// once, 200 to 500 ms before the endpointer can tell speech from a knock, so the user's first words already
    /// meet less echo; if no utterance opens within `BargeInPolicy.Lowering.onsetHold`, it was not them and the
    /// level returns.
    func soundOverReply() async {
        await handle(.soundOnset)
    }

    // MARK: - Timers

    func arm(_ timer: TurnTaking.Timer, _ delay: Duration) {
        timers.arm(timer, after: delay, clock: dependencies.clock) { [weak self] id in await self?.fire(timer, id: id) }
    }

    private func fire(_ timer: TurnTaking.Timer, id: Int) async {
        guard timers.take(timer, id: id) else { return }
        switch timer {
        case .onsetHold, .muteTail, .replyTimeout, .evidenceRecheck, .answerTimeout: await handle(.timerFired(timer))
        // The hands-free mode's timers.
        case .idle: await idled()
        case .wakeWindow: await closeWakeWindow()
        case .captureLimit: await captureLimitReached()
        case .captureCloseWait: if let id = handsFree.capture?.id { await finishCapture(id) }
        }
    }

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
        guard machine.userSpeaking else { return }
        await withCheckedContinuation { floorWaiters.append($0) }
    }

    func releaseFloor() {
        let waiters = floorWaiters
        floorWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}
