import AudioIO
import Foundation
import SessionBridge
import TalkLogging

/// `run --mode realtime`: the Gateway's realtime relay talks back in audio (fact sheet §5). The relay is passed in
/// (`RealtimeRelay`: `TalkRelayClient` in the daemon, a scripted one in tests). The microphone streams to the relay
/// in the session's input contract (`TalkRelayClient` keeps at most 4 appends in flight and reports "input fell
/// behind" beyond), the canceller's leak of the answer as silence (`RealtimeUplinkGate`: the relay's provider takes
/// what its VAD hears for the user); `talk.event` audio plays as it arrives through a bounded queue (`+Output`),
/// the answer over once the relay said its audio is done and it has played, a queue run dry before that an
/// underrun (`RealtimeAnswerEnd`); `clear` flushes it; a `mark` is acknowledged once the audio before it has played;
/// tool calls are answered by the agent (`talk.client.toolCall` → the run's `chat` final → `submitToolResult`). Speech over the
/// output (the native loop's guards, or the user's own sound when the relay sends no words: `RealtimeBargeInGuard`;
/// 250 ms after the output started, 900 ms apart)
/// stops it and cancels that turn, whose late audio is dropped; while the user may be cutting in, the output plays
/// lower (`RealtimeReplyLevel`, `+Level`). A `clear` while the output plays is the relay's barge-in: upstream's
/// provider heard the user start (server VAD) and has stopped its response (its item's audio still in flight is
/// dropped). The user's words come as deltas, each
/// to append to the ones before, until their final. Without echo cancellation or with barge-in off the session is
/// half duplex instead (`Settings.halfDuplex`), and push-to-talk stops the answer (`+Control`). The session is
/// closed at the end.
package actor RealtimeTalkSession {
    package struct Settings: Sendable {
        /// The native loop's policy: its energy and text guards, and `forcedOff` (`--no-barge-in`).
        package var bargeIn = BargeInPolicy()
        /// Apple's level rule (RMS of full scale 32 767): speech over the answer this loud stops it, where nothing
        /// better is known (no user words from the relay, no canceller's measure of the echo: `RealtimeBargeInGuard`).
        package var bargeInRMS = 0.08 * 32_767
        /// Whether the microphone is echo-cancelled (`--aec webrtc` or `pulse`). Without it the session is half
        /// duplex while the answer plays (`halfDuplex`).
        package var echoCancelled = true
        package var bargeInAfterOutput: Duration = .milliseconds(250)
        package var bargeInCooldown: Duration = .milliseconds(900)
        /// Output queued beyond this is cut (`cancelOutput` reason `playback-overflow`), as the browser client does.
        package var maxQueuedMs = 10_000
        /// The relay's output (fact sheet §5.2: PCM16 24 kHz both ways; the create answer states input only).
        package var outputSampleRate = 24_000
        /// Marks waiting behind the audio at once (a relay sends one behind each delta), and turns cut off whose late
        /// audio is dropped (`RealtimeOutputQueue.Limits`).
        package var maxQueuedMarks = RealtimeOutputQueue.Limits().maxQueuedMarks
        package var maxRememberedTurns = 64
        /// Tool calls answered at once: each is an agent run on the Gateway (billed) and a wait of up to 120 s; one
        /// more is answered with an error at once.
        package var maxConcurrentToolCalls = 4
        /// How long a tool call's agent run may take before it is answered with an error (upstream's consult limit).
        package var toolCallTimeout: Duration = .seconds(120)
        /// The user's words of one utterance kept (characters, the latest): a relay that never sends the final
        /// cannot grow them without end.
        package var maxUserWordsCharacters = 1_000
        package init() {}

        /// While the answer plays and for `bargeIn.muteTail` after, the relay gets silence in place of the
        /// microphone and nothing heard stops or lowers the answer: with barge-in off (`--no-barge-in`), and without
        /// echo cancellation, where the microphone hears the answer as loud as a user and the provider's server VAD
        /// would take its echo for the user's turn (`RealtimeBargeInGuard`).
        var halfDuplex: Bool { bargeIn.forcedOff || !echoCancelled }

        var outputLimits: RealtimeOutputQueue.Limits {
            var limits = RealtimeOutputQueue.Limits()
            limits.maxQueuedMs = maxQueuedMs
            limits.sampleRate = outputSampleRate
            limits.maxQueuedMarks = maxQueuedMarks
            limits.maxRememberedTurns = maxRememberedTurns
            return limits
        }
    }

    package nonisolated let events: AsyncStream<TalkEvent>
    private let sink: AsyncStream<TalkEvent>.Continuation
    let capture: any AudioCaptureDevice
    let playback: any AudioPlaybackDevice
    let relay: any RealtimeRelay
    let settings: Settings
    let clock: TalkClock
    private let logger: Logger
    private var originNs: UInt64 = 0
    var state: TalkState = .idle
    private var encoder: UplinkEncoder?
    private var encoderSession: String?
    var output: RealtimeOutputQueue
    /// Tool calls being answered, by call id; each task removes itself when done.
    var toolCalls: [String: Task<Void, Never>] = [:]
    var playerWaiter: CheckedContinuation<Void, Never>?
    /// The marks' acknowledgements, each request after the one before (`+Output`).
    var markAcknowledgements: Task<Void, Never>?
    var outputStartNs: UInt64?
    /// When the last answer stopped playing (session clock): half duplex mutes the microphone `muteTail` past it.
    var outputEndNs: UInt64?
    var outputTurn: String?
    /// Whether the answer playing is over once the queue runs dry (`RealtimeAnswerEnd`), and its wait for a relay
    /// that never says so (the generation fences a wait cancelled as it ran out).
    var answerEnd = RealtimeAnswerEnd()
    var answerWait: Task<Void, Never>?
    var answerWaitGeneration = 0
    /// The provider's item of the audio queued last, and the one the relay's clear cut (`relayHeardUser`): its audio
    /// still in flight when the provider stopped is dropped; the next answer is a new item.
    var outputItem: String?
    var clearedItem: String?
    private var lastBargeInNs: UInt64 = 0
    private var behind = false
    private var reconnecting = false
    private var tasks: [Task<Void, Never>] = []
    /// The capture stream's reader (see +Control): pause and talk stop end it; the generation fences its late frames.
    var microphone: Task<Void, Never>?
    var microphoneGeneration = 0
    var assistantText = ""
    /// The user's words of the utterance under way: the relay's deltas appended, until its final.
    private var userWords = ""
    var bargeInGuard: RealtimeBargeInGuard
    /// What the relay hears while the answer's sound is in the microphone (`RealtimeUplinkGate`).
    var uplinkGate: RealtimeUplinkGate
    /// Microphone frames weighed and passed on (sent, or held by the gate), for tests.
    private(set) var framesHeard = 0
    /// The reply lowered while the user may be cutting in (`+Level`), and its onset hold.
    var replyLevel: RealtimeReplyLevel
    var timers = NamedTimers()

    package init(capture: any AudioCaptureDevice, playback: any AudioPlaybackDevice, relay: any RealtimeRelay,
                 settings: Settings = Settings(), clock: TalkClock = .live, logger: Logger)
    {
        self.capture = capture
        self.playback = playback
        self.relay = relay
        self.settings = settings
        self.clock = clock
        self.logger = logger
        output = RealtimeOutputQueue(limits: settings.outputLimits)
        bargeInGuard = RealtimeBargeInGuard(settings.bargeIn, echoCancelled: settings.echoCancelled)
        uplinkGate = RealtimeUplinkGate(audibleRMS: settings.bargeIn.energy.minimumRMS)
        replyLevel = RealtimeReplyLevel(settings.bargeIn.lowering)
        (events, sink) = AsyncStream.makeStream(of: TalkEvent.self, bufferingPolicy: .unbounded)
    }

    /// Follows the relay and, unless `listening` is false (Talk off until `activate()`), opens the relay session
    /// (an input contract this client cannot send is an error naming it) and listens.
    package func start(listening: Bool = true) async throws {
        originNs = clock.nowNs()
        if !settings.echoCancelled, !settings.bargeIn.forcedOff {
            emit(.microphone(Self.voiceBargeInOff))
            logger.notice("\(Self.voiceBargeInOff)")
        }
        let relayEvents = await relay.events()
        tasks.append(Task { for await event in relayEvents { await self.relayEvent(event) } })
        tasks.append(Task { await self.play() })
        if listening { try await activate() }
    }

    package func stop() async {
        for task in tasks { task.cancel() }
        tasks = []
        for task in toolCalls.values { task.cancel() }
        toolCalls = [:]
        markAcknowledgements?.cancel()   // the session is closing: its marks go with it
        markAcknowledgements = nil
        timers.cancelAll()
        cancelAnswerWait()
        closeMicrophoneStream()
        output.removeAll()
        wakePlayer()
        await playback.stop()
        await capture.stop()
        await relay.close()
        await relay.stop()
        setState(.idle, reason: TalkOffReason.stopped.rawValue)
        sink.finish()
    }

    // MARK: - Input

    func openSession() async throws {
        let input = try await relay.openInput()
        guard encoderSession != input.sessionId else { return }
        let contract = try UplinkContract(encodingName: input.encoding, sampleRate: input.sampleRateHz)
        encoder = try UplinkEncoder(contract: contract)
        encoderSession = input.sessionId
        if state != .idle { announceUplink() }
    }

    /// Names the uplink (and its rate on the wire) for the status: only while Talk is on, so the status never shows
    /// audio going out while it says Talk is off. `activate()` announces it once the microphone streams.
    func announceUplink() {
        guard let contract = encoder?.contract else { return }
        emit(.relayUplink(mode: "realtime", uplink: contract.description,
                          bytesPerSecond: contract.payloadBytesPerSecond() * 4 / 3 + 10 * 120))
    }

    /// Said at start without echo cancellation (`Settings.halfDuplex`).
    package static let voiceBargeInOff = "barge-in by voice is off without echo cancellation (--aec off): the "
        + "microphone is not sent while the answer plays; 'openclaw-talk ptt start' stops the answer"

    func heard(_ frame: AudioFrame) async {
        var samples = frame.samples
        let now = clock.nowNs()
        let onset = bargeInGuard.hear(frame, atNs: now)
        if settings.halfDuplex {
            // The relay must not hear the answer: its echo would be the user's turn to the provider's server VAD.
            if outputStartNs != nil || outputEndNs.map({ now &- $0 < Self.ns(settings.bargeIn.muteTail) }) == true {
                samples = [Int16](repeating: 0, count: samples.count)
            }
        } else {
            if let started = outputStartNs {
                if onset, now &- started >= Self.ns(settings.bargeInAfterOutput) { await perform(replyLevel.soundOnset()) }
                await considerBargeIn(samples)
            }
            samples = uplinkGate.pass(frame, soundOnset: onset)
            // The user's own sound in the linear stage, where the later stages muted their first word (a user who began
            // as one of the answer's sentences began): the answer is lowered there, not at their second word's onset.
            if uplinkGate.heardOwnInLinear, let started = outputStartNs, now &- started >= Self.ns(settings.bargeInAfterOutput) {
                await perform(replyLevel.soundOnset())
            }
        }
        defer { framesHeard += 1 }
        guard !samples.isEmpty, let encoder, let chunk = try? encoder.append(samples) else { return }
        switch await relay.append(chunk.bytes, audioMs: chunk.audioMs) {
        case .sent:
            behind = false
        case .fellBehind:
            if !behind { emit(.microphone("input fell behind: audio dropped while the relay catches up")) }
            behind = true
        case .noSession:
            guard !reconnecting, state == .listening || state == .speaking else { return }   // not after talk stop
            reconnecting = true
            tasks.append(Task {
                do { try await self.openSession() } catch { self.emit(.error("the realtime relay is unavailable: \(error)")) }
                self.reconnected()
            })
        }
    }

    private func reconnected() { reconnecting = false }

    private func considerBargeIn(_ samples: [Int16]) async {
        guard let started = outputStartNs, !samples.isEmpty else { return }
        let now = clock.nowNs()
        guard bargeInGuard.isUserSpeech(nowNs: now, levelRMS: settings.bargeInRMS), now &- started >= Self.ns(settings.bargeInAfterOutput),
              now &- lastBargeInNs >= Self.ns(settings.bargeInCooldown) else { return }
        lastBargeInNs = now
        let turn = await cutOutput()
        // From the first loud frame of the user's sound, as the capture stream brought it, to this decision.
        let latencyNs = now &- min(now, bargeInGuard.soundStartNs ?? now)
        emit(.bargeIn(offsetSeconds: Double(now &- started) / 1e9, detectionLatencyMs: Double(latencyNs) / 1e6, partial: ""))
        await stopSpeaking(completed: false, ending: .bargeIn)
        await cancelRelayOutput(turn, reason: "barge-in")
    }

    /// The relay cleared the output while it played: its provider heard the user start (upstream creates the bridge
    /// with `interruptResponseOnInputAudio`) and stopped the response itself, so nothing is cancelled here and no turn
    /// is dropped (upstream's next answer may come under the same turn id). Stopped before the speaker is, so the
    /// player does not end the turn as a reply played to its end.
    private func relayHeardUser() async {
        guard let started = outputStartNs else { return }
        guard !settings.halfDuplex else {
            await stopSpeaking(completed: false, ending: .replyDone)
            return
        }
        let now = clock.nowNs()
        lastBargeInNs = now
        clearedItem = outputItem
        let latencyNs = now &- min(now, bargeInGuard.soundStartNs ?? now)
        emit(.bargeIn(offsetSeconds: Double(now &- started) / 1e9, detectionLatencyMs: Double(latencyNs) / 1e6,
                      partial: userWords.trimmingCharacters(in: .whitespaces)))
        await stopSpeaking(completed: false, ending: .bargeIn)
    }

    // MARK: - Relay events

    private func relayEvent(_ event: TalkRelayEvent) async {
        switch event.kind {
        case .audio(let bytes, let item):
            await queueAudio(bytes, item: item, turnId: event.turnId)
        case .audioDone(let item):
            relayAudioDone(item: item, turnId: event.turnId)
        case .mark(let name):
            if case .refused(let why) = output.appendMark(name) {
                emit(.error("the relay's mark was refused: \(why)"))
                return
            }
            wakePlayer()
        case .clear:
            flush()
            if outputStartNs != nil {
                await relayHeardUser()
            } else {
                await perform(replyLevel.replyCut())
            }
            await playback.stop()
            emit(.relayNote("output cleared"))
        case .speechStart:
            await userSpeaks()
        case .partial(let text):
            bargeInGuard.userPartial(text, atNs: clock.nowNs())
            await userSpeaks()
            emit(.partialTranscript(text))
        case .transcript(let role, let text, let final):
            guard !text.isEmpty else { return }
            if role == "assistant" {
                bargeInGuard.assistantSaid(text)
            } else if !final {
                // Upstream forwards the provider's deltas (OpenAI's input transcription deltas, Google Live's
                // pieces): each is appended, with its own spacing, to the utterance's words so far.
                userWords = String((userWords + text).suffix(settings.maxUserWordsCharacters))
                bargeInGuard.userPartial(userWords, atNs: clock.nowNs())
                await userSpeaks()
                emit(.partialTranscript(userWords.trimmingCharacters(in: .whitespaces)))   // as the native loop shows them
            } else {
                userWords = ""
                bargeInGuard.userFinal()
                await perform(replyLevel.utteranceCloses())
            }
            guard final else { return }
            if role == "assistant" {
                assistantText = text
                emit(.replyFinal(text))
            } else {
                emit(.finalTranscript(text: text, engine: "gateway-realtime", startMs: 0, endMs: 0, endToFinalMs: 0))
            }
        case .toolCall(let callId, let name, let args, _):
            toolCall(callId: callId, name: String(name.prefix(128)), args: args)
        case .error(let message):
            emit(.error("the realtime relay: \(String(message.prefix(200)))"))
        case .closed(let reason):
            emit(.relayNote("relay session closed (\(reason))"))
        default:
            break
        }
    }

    func setState(_ new: TalkState, reason: String) {
        guard new != state else { return }
        let old = state
        state = new
        emit(.stateChanged(from: old, to: new, reason: reason))
    }

    func emit(_ kind: TalkEvent.Kind) {
        let now = clock.nowNs()
        sink.yield(TalkEvent(wallTime: clock.wallNow(), monotonicMs: Int64((now &- originNs) / 1_000_000), kind: kind))
        if case .error(let message) = kind { logger.warning("\(message)") }
    }

    static func ns(_ d: Duration) -> UInt64 { UInt64(max(0, RelayTranscription.nanoseconds(d))) }
}
