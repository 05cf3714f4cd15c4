import AudioIO
import Foundation
import SessionBridge
@testable import SpeechRecognition
import SpeechSynthesis
import TalkLogging
import Synchronization
import Threading

@testable import TalkSession

/// A microphone the test speaks into: frames of a chosen level, when the test says.
actor FakeMicrophone: AudioCaptureDevice {
    private var frames = SquareWaveFrames()

    func start() -> AsyncStream<CaptureEvent> { frames.start() }
    func stop() { frames.stop() }

    /// Whether a capture stream is open: frames pushed while it is not go nowhere.
    var isOpen: Bool { frames.isOpen }

    /// `SquareWaveFrames.push`.
    func push(amplitude: Int16, count: Int, echoExplained: Float? = nil, echoExplainedClosely: Float? = nil, linear: Int16? = nil) {
        frames.push(amplitude: amplitude, count: count, echoExplained: echoExplained, echoExplainedClosely: echoExplainedClosely, linear: linear)
    }
}

/// A test microphone's stream: 20 ms frames of a square wave at the level the test says, numbered from 0. Its owner
/// (an actor: `FakeMicrophone`, or one on a thread of its own) pushes them.
struct SquareWaveFrames {
    private var continuation: AsyncStream<CaptureEvent>.Continuation?
    private var sequence: UInt64 = 0

    mutating func start() -> AsyncStream<CaptureEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: CaptureEvent.self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        return stream
    }

    mutating func stop() {
        continuation?.finish()
        continuation = nil
    }

    var isOpen: Bool { continuation != nil }

    /// `count` 20 ms frames of a square wave of this amplitude (0: digital silence); `echoExplained` and
    /// `echoExplainedClosely` as echo cancellation would mark them (nil: no canceller); `linear`: what its linear stage
    /// left of each (a square wave of that amplitude; nil: none).
    mutating func push(amplitude: Int16, count: Int, echoExplained: Float? = nil, echoExplainedClosely: Float? = nil, linear: Int16? = nil) {
        func square(_ amplitude: Int16) -> [Int16] { (0..<AudioFrame.samplesPerFrame).map { $0 % 20 < 10 ? amplitude : -amplitude } }
        for _ in 0..<count {
            var frame = AudioFrame(sequence: sequence, captureTimeNs: monotonicNanoseconds(), samples: square(amplitude))
            frame.echoExplained = echoExplained
            frame.echoExplainedClosely = echoExplainedClosely
            frame.linearSamples = linear.map(square)
            continuation?.yield(.frame(frame))
            sequence += 1
        }
    }
}

/// The recogniser's side scripted: the test says what is heard; the capture it is given (the loop's gate) is
/// read all along, as the real pipeline reads it, and the loudest sample of each frame is kept.
actor ScriptedListener: TalkListener {
    private let capture: any AudioCaptureDevice
    private var continuation: AsyncStream<UtteranceEvent>.Continuation?
    private var reader: Task<Void, Never>?
    private(set) var peaks: [Int] = []
    /// Every `reportPartials(everyFrames:)`, in order.
    private(set) var partialCadences: [Int?] = []

    init(capture: any AudioCaptureDevice) {
        self.capture = capture
    }

    func start() async throws -> AsyncStream<UtteranceEvent> {
        let frames = try await capture.start()
        reader = Task {
            for await event in frames {
                if case .frame(let frame) = event { self.note(frame) }
            }
        }
        let (stream, continuation) = AsyncStream.makeStream(of: UtteranceEvent.self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        return stream
    }

    func stop() async {
        reader?.cancel()
        await capture.stop()
        continuation?.finish()
    }

    /// A scripted listener hears what the test says: no grammar, no decoding ahead, no position of its own.
    func useGrammar(_ jsgf: String?) {}
    func decodeAhead(notBeforeMs ms: Int?) {}
    nonisolated var heardThroughMs: Int? { nil }

    func reportPartials(everyFrames frames: Int?) { partialCadences.append(frames) }
    /// Every `decodeWhileStarting(_:)`, in order.
    private(set) var decodesAhead: [Bool] = []
    func decodeWhileStarting(_ on: Bool) { decodesAhead.append(on) }

    /// Waits (bounded) until `decodeWhileStarting` has been asked `count` times; returns the answers.
    func decodesAhead(count: Int) async -> [Bool] {
        let deadline = ContinuousClock.now + .seconds(10)
        while decodesAhead.count < count, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return decodesAhead
    }

    /// Waits (bounded) until `count` cadences have been asked for; returns them.
    func cadences(count: Int) async -> [Int?] {
        let deadline = ContinuousClock.now + .seconds(10)
        while partialCadences.count < count, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return partialCadences
    }

    private func note(_ frame: AudioFrame) { peaks.append(frame.samples.map { abs(Int($0)) }.max() ?? 0) }

    /// Every `decodeAgain(fromMs:samples:)`, in order: where from, and what it sends of a frame.
    private(set) var decodedAgain: [(fromMs: Int, samples: @Sendable (AudioFrame) -> [Int16])] = []
    func decodeAgain(fromMs: Int, samples: @escaping @Sendable (AudioFrame) -> [Int16]) { decodedAgain.append((fromMs, samples)) }

    func hear(_ event: UtteranceEvent) { continuation?.yield(event) }

    /// A whole utterance: started, a partial, ended, final.
    func utterance(_ text: String) {
        hear(.speechStarted(positionMs: 0))
        if !text.isEmpty { hear(.partial(text)) }
        hear(.speechEnded(lastSpeechEndMs: 1000, closedAtMs: 1700))
        hear(.final(Self.result(text)))
    }

    static func result(_ text: String) -> UtteranceResult {
        UtteranceResult(generation: 1, hypothesis: Hypothesis(text: text), startMs: 0, audioStartMs: 0, endMs: 1000, closedAtMs: 1700,
                        reason: .silence, frameCount: 85, finalizeMs: 5, endToFinalMs: 705, decodeCPUSeconds: 0.1)
    }
}

/// A speaker: completes each buffer at once, or (held) plays until `stop()`. Its level may be set from any thread, as
/// `PulsePlayback`'s may (`ImmediatePlaybackGain`: the microphone gate lowers the reply itself).
actor FakeSpeaker: AudioPlaybackDevice, ImmediatePlaybackGain {
    var hold: Bool
    private(set) var played: [PCMBuffer] = []
    private(set) var stops = 0
    /// Every gain set, in order, with the thread that set it; the level now (a `stop()` returns it to 1, as real
    /// speakers do). Behind a lock: set from whichever thread calls.
    private let gain = Mutex((gains: [Float](), threads: [String](), level: Float(1)))
    private(set) var levels: [Float] = []
    private var waiting: [CheckedContinuation<PlaybackOutcome, Never>] = []

    init(hold: Bool = false) { self.hold = hold }

    /// Every `setGain` and `setGainAtOnce`, in order.
    var gains: [Float] { gain.withLock { $0.gains } }
    /// The threads they came from, as the system names them.
    var gainThreads: [String] { gain.withLock { $0.threads } }
    var level: Float { gain.withLock { $0.level } }

    func setGain(_ gain: Float) { setGainAtOnce(gain) }

    nonisolated func setGainAtOnce(_ gain: Float) {
        let thread = ThreadName.ofCallingThread()
        self.gain.withLock {
            $0.gains.append(gain)
            $0.threads.append(thread)
            $0.level = gain
        }
    }

    func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome {
        played.append(buffer)
        levels.append(level)
        guard hold else { return .completed }
        return await withCheckedContinuation { waiting.append($0) }
    }

    func stop() {
        stops += 1
        gain.withLock { $0.level = 1 }
        for w in waiting { w.resume(returning: .stopped) }
        waiting = []
    }

    /// A held buffer plays to its end.
    func complete() {
        for w in waiting { w.resume(returning: .completed) }
        waiting = []
    }

    func close() {}
}

/// A voice that makes 10 ms of a tone per character at once.
final class FakeSynthesizer: SpeechSynthesizer, @unchecked Sendable {
    private let lock = NSLock()
    private var cancels = 0
    private var texts: [String] = []
    var sampleRate: Int { 16_000 }

    func synthesize(_ text: String, settings: VoiceSettings) -> SynthesisStream {
        lock.withLock { texts.append(text) }
        let samples = [Int16](repeating: 1000, count: 160 * max(1, text.count))
        return SynthesisStream(
            chunks: AsyncThrowingStream { c in
                c.yield(SynthesisChunk(sampleRate: 16_000, samples: samples))
                c.finish()
            }, isCurrent: { true }, cancel: {})
    }

    func cancelAll() { lock.withLock { cancels += 1 } }

    var cancelCount: Int { lock.withLock { cancels } }
    var synthesised: [String] { lock.withLock { texts } }
}

/// The agent: records every transcript and answers as scripted.
actor ScriptedAgent: TalkConversation {
    enum Script: Sendable {
        /// Deltas of this text, then final.
        case reply(String)
        case fail(ChatReplyFailure)
        /// Nothing at all, ever.
        case silent
        /// The test writes the updates with `write`.
        case manual
    }

    struct Sent: Sendable, Equatable {
        var transcript: String
        var interruptedAtSeconds: Double?
    }

    var script: Script
    private(set) var sent: [Sent] = []
    /// How many times the loop asked to abort the run of the last transcript.
    private(set) var aborts = 0
    private var open: AsyncStream<ChatReplyUpdate>.Continuation?

    init(_ script: Script) { self.script = script }

    func set(_ script: Script) { self.script = script }

    func converse(_ transcript: String, interruptedAtSeconds: Double?) -> AsyncStream<ChatReplyUpdate> {
        sent.append(Sent(transcript: transcript, interruptedAtSeconds: interruptedAtSeconds))
        let (stream, c) = AsyncStream.makeStream(of: ChatReplyUpdate.self, bufferingPolicy: .unbounded)
        c.yield(.accepted(runId: "run-\(sent.count)", status: "started"))
        switch script {
        case .reply(let text):
            var so = ""
            for word in text.split(separator: " ", omittingEmptySubsequences: false) {
                so += (so.isEmpty ? "" : " ") + word
                c.yield(.partial(so, replaced: false))
            }
            c.yield(.final(text, source: .events))
            c.finish()
        case .fail(let failure):
            c.yield(.failed(failure))
            c.finish()
        case .silent:
            open = c
        case .manual:
            open = c
        }
        return stream
    }

    func abortReply() { aborts += 1 }

    func write(_ update: ChatReplyUpdate) {
        open?.yield(update)
        if update.isTerminal { open?.finish() }
    }
}

/// Every event of a session, and waits for the ones a test expects.
actor EventLog {
    private(set) var events: [TalkEvent] = []

    func append(_ event: TalkEvent) { events.append(event) }

    var names: [String] { events.map(\.name) }

    var states: [TalkState] {
        events.compactMap { if case .stateChanged(_, let to, _) = $0.kind { to } else { nil } }
    }

    /// Waits (at most 30 s: a bound that only catches a loop that never gets there) for an event.
    func waitFor(times: Int = 1, _ predicate: @Sendable (TalkEvent.Kind) -> Bool) async -> Bool {
        // A bound that only catches a loop that never gets there, not a loaded machine.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if events.filter({ predicate($0.kind) }).count >= times { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    func count(_ predicate: @Sendable (TalkEvent.Kind) -> Bool) -> Int { events.filter { predicate($0.kind) }.count }

    func index(_ predicate: @Sendable (TalkEvent.Kind) -> Bool) -> Int? { events.firstIndex { predicate($0.kind) } }
}

/// A session on fakes, its events collected.
struct Rig {
    let microphone = FakeMicrophone()
    let speaker: FakeSpeaker
    let synthesizer = FakeSynthesizer()
    let agent: ScriptedAgent
    let session: TalkSession
    let log = EventLog()
    let listenerBox = ListenerBox()
    let phases = PhaseLog()

    init(agent: ScriptedAgent.Script, holdPlayback: Bool = false, settings: TalkSession.Settings = TalkSession.Settings(),
         gatewayVoice: (any GatewayVoice)? = nil, clock: TalkClock = .live, listening: Bool = true,
         transcriptSource: (any TranscriptSource)? = nil) async throws {
        speaker = FakeSpeaker(hold: holdPlayback)
        self.agent = ScriptedAgent(agent)
        let box = listenerBox
        let phases = phases
        var dependencies = TalkSession.Dependencies(
            capture: microphone, playback: speaker,
            makeListener: { capture in box.make(capture) },
            synthesizer: synthesizer, conversation: self.agent, gatewayVoice: gatewayVoice,
            announce: { enabled, phase in await phases.append(enabled ? phase?.rawValue ?? "?" : "disabled") }, clock: clock)
        dependencies.transcriptSource = transcriptSource
        session = TalkSession(dependencies: dependencies, settings: settings, logger: Logger(label: "talk-test", handler: InMemoryLogHandler()))
        let log = log
        let events = session.events
        Task { for await event in events { await log.append(event) } }
        try await session.start(listening: listening)
    }

    var listener: ScriptedListener { listenerBox.listener! }
}

final class ListenerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var made: ScriptedListener?

    func make(_ capture: any AudioCaptureDevice) -> ScriptedListener {
        let listener = ScriptedListener(capture: capture)
        lock.withLock { made = listener }
        return listener
    }

    var listener: ScriptedListener? { lock.withLock { made } }
}

actor PhaseLog {
    private(set) var phases: [String] = []
    func append(_ phase: String) { phases.append(phase) }
}

/// The Gateway's voice: a clip of 0.5 s for each sentence, or "use the local voice" for sentences holding `failOn`.
actor FakeGatewayVoice: GatewayVoice {
    let failOn: String?
    private(set) var asked: [String] = []
    /// The voice settings each sentence was asked in.
    private(set) var voices: [TalkVoiceSettings] = []

    init(failOn: String? = nil) { self.failOn = failOn }

    func speak(_ text: String, voice: TalkVoiceSettings) -> GatewaySpeech {
        asked.append(text)
        voices.append(voice)
        if let failOn, text.contains(failOn) { return .useLocalVoice(reason: "talk_unconfigured") }
        return .audio(PCMBuffer(sampleRate: 24_000, samples: [Int16](repeating: 500, count: 12_000)))
    }
}

/// The transcription relay's side: records what the loop told it, and answers every utterance with `words`.
actor RecordingTranscriptSource: TranscriptSource {
    let words: String
    private(set) var calls: [String] = []

    init(words: String) { self.words = words }

    func utteranceStarted(positionMs: Int, held: Bool) { calls.append(held ? "held" : "started") }
    func utteranceReleased(onsetMs: Int?) { calls.append("released from \(onsetMs.map(String.init) ?? "its start")") }
    /// Holds no frames: from the stretch's first onset.
    func utteranceReleased(stretchMs: [Int]) { utteranceReleased(onsetMs: stretchMs.first) }
    func utteranceEnded(lastSpeechEndMs: Int) { calls.append("ended") }

    func transcript(localText: String, discard: Bool) -> TranscriptChoice {
        calls.append(discard ? "discarded" : "transcript")
        return TranscriptChoice(text: words, engine: "gateway-relay")
    }

    func takeNotes() -> [TalkEvent.Kind] { [] }
    func stop() {}
}
