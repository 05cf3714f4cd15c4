import AudioIO
import Foundation
import SessionBridge
import SpeechRecognition
import SpeechSynthesis
import TalkLogging

/// The Talk loop: listening → a final transcript goes out → thinking → the reply is spoken sentence by sentence
/// as it streams in → listening. Who has the floor is `TurnTaking`'s to decide (a value, no I/O): the actor feeds
/// it what it hears and what its work reports, and carries out the actions it returns (`TalkSession+Actions`).
/// The actor keeps the tasks, the devices and the callers waiting; the microphone never stops (so the user
/// can cut in, or start the next turn while the agent thinks), and what it hears is read against the state.
///
/// Turns' work is fenced by the machine's current turn (`turn`): once a new transcript, a barge-in or `stop()` moves the
/// machine off a turn, its work (a reply still streaming, a sentence being synthesised) finds itself stale and ends
/// without a word spoken.
package actor TalkSession {
    package nonisolated let events: AsyncStream<TalkEvent>
    let eventSink: AsyncStream<TalkEvent>.Continuation
    let dependencies: Dependencies
    /// As the session started; what changes while it runs is the machine's or `voices`.
    let settings: Settings
    /// The voices replies are spoken in (`talk.config`, a reload, a reply's directive change them): a value, no I/O.
    var voices: ReplyVoices
    /// `settings.bargeIn`, fixed for the session's life.
    let bargeIn: BargeInPolicy
    let logger: Logger
    nonisolated let gate: MicrophoneGate
    /// Where the events' `monotonicMs` count from: the session's making.
    let originNs: UInt64

    /// The loop's state: who has the floor, the turn, the hands-free mode, the capture, the microphone's mode, what
    /// waits for a pause. Every other `var` here is a handle on work or a device, or a list of callers waiting.
    var machine: TurnTaking
    package var state: TalkState { machine.state.talkState }
    /// The recogniser over the gate: made at `start`, its stream opened and closed with Talk.
    var listener: (any TalkListener)?
    /// The listener was asked for partials at barge-in's cadence (`followPartialCadence`).
    var partialsQuick = false
    /// The listener was asked to decode from an utterance's first voiced frame (`followPartialCadence`).
    var decodingAhead = false
    /// Reads the microphone's stream into `handle`: cancelled when the microphone closes.
    var listenTask: Task<Void, Never>?
    /// The microphone's stream, opened and not yet read (`Action.openMicrophone` starts reading it).
    var opened: AsyncStream<UtteranceEvent>?
    /// `talk.mode` phases on their way to the Gateway, in order (`Action.announce`), and the task sending them.
    var announcements: AsyncStream<TalkPhase>.Continuation?
    var announcer: Task<Void, Never>?

    /// The turn whose work is current: the machine's while it thinks or speaks it (0: none); other turns' work is stale.
    var turn: Int { machine.currentTurn ?? 0 }
    /// The current turn's work (`TalkSession+Turn`): cancelled when the machine cuts the reply.
    var turnTask: Task<Void, Never>?
    /// Feeds the gate's sound onsets to the machine (`Event.soundOnset`).
    var onsetTask: Task<Void, Never>?
    /// Every timer of the loop, by name (`TurnTaking.Timer`): the sleeping tasks, armed and cancelled by actions.
    var timers = NamedTimers()
    /// A reply's sentence waiting for the user to finish before it may speak (released when the machine says so).
    var floorWaiters: [CheckedContinuation<Void, Never>] = []
    /// The current turn's speaker: its sentences being synthesised (`talk.speak` or the local voice) and played;
    /// cancelled with the turn.
    var speech: ReplySpeaker?
    /// Who waits for a push-to-talk capture's result, by the capture's id (the machine keeps the capture).
    var captureWaiters: [String: [CheckedContinuation<PushToTalkResult, Never>]] = [:]
    /// The hands-free mode in force: `Settings.mode`, or wake-phrase mode after always-listening idled out.
    var handsFree: TurnTaking.HandsFree { machine.handsFree }
    /// The loop's own words playing (a notice, an approval's question): `TalkSession+Asking`.
    var promptTask: Task<Void, Never>?
    /// Where the approval asked about is decided (a handle given with each `ask`).
    var approvalAnswers: (any ApprovalAnswers)?

    package init(dependencies: Dependencies, settings: Settings = Settings(), logger: Logger) {
        self.dependencies = dependencies
        self.settings = settings
        voices = ReplyVoices(settings)
        bargeIn = settings.bargeIn
        self.logger = logger
        gate = MicrophoneGate(
            dependencies.capture, energy: settings.bargeIn.energy, speaker: dependencies.playback as? any ImmediatePlaybackGain,
            logger: logger)
        var turnTaking = TurnTaking.Configuration()
        turnTaking.policy = settings.bargeIn
        turnTaking.mode = settings.mode
        turnTaking.replyTimeout = settings.replyTimeout
        turnTaking.wakePhrases = settings.wakePhrases
        turnTaking.wakeFollowUp = settings.wakeFollowUp
        turnTaking.idleTimeout = settings.idleTimeout
        turnTaking.pushToTalkCaptureLimit = settings.pushToTalkCaptureLimit
        turnTaking.pushToTalkOnceLimit = settings.pushToTalkOnceLimit
        turnTaking.pushToTalkCloseWait = settings.pushToTalkCloseWait
        turnTaking.relays = dependencies.transcriptSource != nil
        machine = TurnTaking(turnTaking)
        gate.setMode(machine.microphone)
        originNs = dependencies.clock.nowNs()
        (events, eventSink) = AsyncStream.makeStream(of: TalkEvent.self, bufferingPolicy: .unbounded)
    }

    /// Starts listening and returns; the loop runs until `stop()`. With `listening: false` Talk stays off (no
    /// microphone, no `talk.mode`) until `activate()` (the daemon's `talk start`).
    package func start(listening: Bool = true) async throws {
        listener = try dependencies.makeListener(gate)
        let onsets = gate.soundOnsets
        onsetTask = Task { [weak self] in
            for await onset in onsets { await self?.soundOverReply(onset) }
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
            await handle(.control(.deactivate(.stopped)))
        } else {
            await closeMicrophone()
            await quiet()
        }
        onsetTask?.cancel()
        await dependencies.transcriptSource?.stop()
        releaseFloor()
        timers.cancelAll()
        announcements?.finish()
        await announcer?.value
        if let announce = dependencies.announce { await announce(false, nil) }
        eventSink.finish()
    }

    /// What `talk.config` says: barge-in (unless forced off) and whether the Gateway's voice speaks.
    package func apply(_ config: TalkConfig) async {
        if let interrupt = config.interruptOnSpeech {
            machine.interruptOnSpeech = interrupt
            gate.lowerAtSoundOnset(machine.soundOnsetLowering)
        }
        voices.apply(config, gatewayVoiceAvailable: dependencies.gatewayVoice != nil)
        // Its idle timeout, unless `--idle-timeout` gave one.
        if !settings.idleTimeoutFixed {
            await handle(.idleTimeoutChanged(config.idleTimeoutS.map { .milliseconds(Int(($0 * 1000).rounded())) }))
        }
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
        case .partial(let text, let endMs):
            await handle(.partial(text, atNs: now, endMs: endMs))
        case .speechEnded(let end, let closed):
            // The speech ended the silence window ago; the reply may have ended since.
            let endedNs = now &- UInt64(max(0, closed - end)) * 1_000_000
            await handle(.speechEnded(lastSpeechEndMs: end, closedAtMs: closed, endedNs: endedNs))
        case .final(let result):
            // A relayed utterance's words are the source's.
            let relayed = await handle(.finalArriving).contains(.relay(.takeFinal))
            let (chosen, engine) = relayed ? await relayedFinal(result) : (result, nil)
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
        // The hands-free mode decides what of it is a turn (a capture collects it, wake-phrase mode takes only what
        // follows the phrase).
        await handle(.final(heard, timing: await heardTiming(of: result)))
    }

    /// The final's words in stream time, and where the user began speaking in its utterance.
    private func heardTiming(of result: UtteranceResult) async -> TurnTaking.HeardTiming {
        let words = result.hypothesis.words.map {
            TurnTaking.HeardTiming.Word($0.word, startMs: result.audioStartMs + $0.startMs, endMs: result.audioStartMs + $0.endMs)
        }
        return TurnTaking.HeardTiming(words: words, userSound: await gate.userSpeechStart(fromPositionMs: result.startMs))
    }

    /// The microphone turned loud while the reply plays: perhaps the user cutting in. The reply is lowered at
    /// once (by the gate itself, at the onset's frame, where the speaker allows it: `MicrophoneGate.lowerAtSoundOnset`),
    /// 200 to 500 ms before the endpointer can tell speech from a knock, so the user's first words already
    /// meet less echo; if no utterance opens within `BargeInPolicy.Lowering.onsetHold` and the microphone no longer
    /// hears their own sound (`TurnTaking+Lowering`), it was not them and the level returns. Where it began
    /// (`positionMs`, stream ms) is where a held utterance goes to the relay from (`TurnTaking+Relay`).
    func soundOverReply(_ onset: MicrophoneGate.SoundOnset) async {
        if logger.logLevel <= .debug {
            let now = monotonicNanoseconds()
            logger.debug("sound onset reached the loop", metadata: [
                "talk.onsetMs": "\(onset.positionMs)", "talk.onsetLagMs": "\(MicrophoneGate.milliseconds(now &- min(now, onset.captureNs)))",
            ])
        }
        await handle(.soundOnset(positionMs: onset.positionMs, loweredTo: onset.loweredTo))
    }

    // MARK: - Timers

    func arm(_ timer: TurnTaking.Timer, _ delay: Duration) {
        timers.arm(timer, after: delay, clock: dependencies.clock) { [weak self] id in await self?.fire(timer, id: id) }
    }

    private func fire(_ timer: TurnTaking.Timer, id: Int) async {
        guard timers.take(timer, id: id) else { return }
        await handle(.timerFired(timer))
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
