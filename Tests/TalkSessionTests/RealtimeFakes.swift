import AudioIO
import Foundation
import SessionBridge
import TalkLogging
import Testing

@testable import TalkSession

/// Plays in real time (or `speed` times faster); `stop()` cuts the buffer playing.
actor PacedSpeaker: AudioPlaybackDevice {
    let speed: Double
    private(set) var played: [(samples: Int, at: ContinuousClock.Instant)] = []
    private(set) var stops = 0
    /// The levels set (`setGain`), in order.
    private(set) var gains: [Float] = []
    /// When the last buffer finished playing (wall clock, to compare with the Gateway's records).
    private(set) var lastFinished: Date?
    private var generation = 0

    init(speed: Double = 1) { self.speed = speed }

    func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome {
        played.append((buffer.samples.count, .now))
        let mine = generation
        let seconds = Double(buffer.samples.count) / Double(buffer.sampleRate) / speed
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < end {
            try? await Task.sleep(for: .milliseconds(10))
            if generation != mine { return .stopped }
        }
        lastFinished = Date()
        return .completed
    }

    func stop() {
        generation += 1
        stops += 1
    }

    func setGain(_ gain: Float) { gains.append(gain) }
    func close() {}
    var playedSamples: Int { played.reduce(0) { $0 + $1.samples } }
    var playedSeconds: Double { Double(playedSamples) / 24_000 }
}

/// The Gateway's realtime relay scripted: the test sends its events; what the session asks of it is recorded.
/// Its input contract is PCM16 at 16 kHz (640 bytes a 20 ms frame, sent in 100 ms appends).
actor ScriptedRelay: RealtimeRelay {
    struct Cancel: Equatable {
        var turnId: String?
        var reason: String
    }

    private let stream: AsyncStream<TalkRelayEvent>
    private let continuation: AsyncStream<TalkRelayEvent>.Continuation
    /// Relay sessions opened and closed; the current one's id is `relay-<opened>`.
    private(set) var opened = 0
    private(set) var closed = 0
    private(set) var stopped = false
    private(set) var appendedBytes = 0
    /// The loudest sample of each append (PCM16 LE), in order: 0 for silence.
    private(set) var appendedPeaks: [Int] = []
    private(set) var cancels: [Cancel] = []
    /// Marks acknowledged, with when (wall clock).
    private(set) var acknowledged: [(name: String, at: Date)] = []
    private(set) var toolResults: [(callId: String, result: JSONValue)] = []
    /// Tool calls the session asked to have answered.
    private(set) var toolCallsAnswered: [String] = []
    /// What the next appends get (after `noSession` once, the session must open a new one).
    var appendOutcomes: [TalkRelayClient.AppendOutcome] = []
    private var live = false
    private var toolCallsHeld = false
    private var heldToolCalls: [CheckedContinuation<Void, Never>] = []

    init() { (stream, continuation) = AsyncStream.makeStream(of: TalkRelayEvent.self, bufferingPolicy: .unbounded) }

    var sessionId: String { "relay-\(opened)" }

    func events() -> AsyncStream<TalkRelayEvent> { stream }

    func openInput() -> RealtimeRelayInput {
        if !live {
            opened += 1
            live = true
        }
        return RealtimeRelayInput(sessionId: sessionId, encoding: "pcm16", sampleRateHz: 16_000)
    }

    func append(_ bytes: [UInt8], audioMs: Int) -> TalkRelayClient.AppendOutcome {
        if !appendOutcomes.isEmpty {
            let outcome = appendOutcomes.removeFirst()
            if outcome == .noSession { live = false }   // as after a reconnect: the session is gone
            return outcome
        }
        appendedBytes += bytes.count
        appendedPeaks.append(stride(from: 0, to: bytes.count - 1, by: 2).reduce(0) {
            max($0, abs(Int(Int16(bitPattern: UInt16(bytes[$1]) | UInt16(bytes[$1 + 1]) << 8))))
        })
        return .sent(requests: 1)
    }

    func cancelOutput(turnId: String?, reason: String) { cancels.append(Cancel(turnId: turnId, reason: reason)) }
    func acknowledgeMark(_ name: String) { acknowledged.append((name, Date())) }
    func submitToolResult(callId: String, result: JSONValue) { toolResults.append((callId, result)) }

    /// Answers "it is noon", once `releaseToolCalls()` is called when `holdToolCalls()` was.
    func answerToolCall(callId: String, name: String, args: JSONValue, timeout: Duration) async -> Result<String, TalkRelayError> {
        toolCallsAnswered.append(callId)
        if toolCallsHeld { await withCheckedContinuation { heldToolCalls.append($0) } }
        toolResults.append((callId, ["text": "it is noon"]))
        return .success("it is noon")
    }

    func holdToolCalls() { toolCallsHeld = true }

    func releaseToolCalls() {
        toolCallsHeld = false
        for waiter in heldToolCalls { waiter.resume() }
        heldToolCalls = []
    }

    func close() {
        guard live else { return }
        live = false
        closed += 1
    }

    func stop() {
        stopped = true
        continuation.finish()
    }

    func script(_ outcomes: [TalkRelayClient.AppendOutcome]) { appendOutcomes = outcomes }

    // MARK: - The relay's side

    func send(_ kind: TalkRelayEvent.Kind, turnId: String? = nil) {
        continuation.yield(TalkRelayEvent(sessionId: sessionId, kind: kind, turnId: turnId))
    }

    /// `seconds` of the answer's audio (PCM16 at 24 kHz, a quiet tone) for `turnId`, in chunks of 200 ms, of the
    /// provider's item `itemId`.
    func sendAudio(seconds: Double, turnId: String, itemId: String? = nil) {
        let chunks = Int((seconds / 0.2).rounded())
        let chunk = (0..<4_800).flatMap { i -> [UInt8] in
            let sample = UInt16(bitPattern: i % 48 < 24 ? Int16(1_000) : Int16(-1_000))
            return [UInt8(sample & 0xFF), UInt8(sample >> 8)]
        }
        for _ in 0..<chunks { send(.audio(chunk, itemId: itemId), turnId: turnId) }
    }
}

/// A realtime session on a paced speaker, a fake microphone and a scripted relay, its events collected.
struct RealtimeRig {
    let mic = FakeMicrophone()
    let speaker: PacedSpeaker
    let relay = ScriptedRelay()
    let session: RealtimeTalkSession
    let log = EventLog()

    init(speed: Double = 1, settings: RealtimeTalkSession.Settings = RealtimeTalkSession.Settings(),
         clock: TalkClock = .live) async throws {
        speaker = PacedSpeaker(speed: speed)
        session = RealtimeTalkSession(capture: mic, playback: speaker, relay: relay, settings: settings, clock: clock,
                                      logger: Logger(label: "realtime-test", handler: InMemoryLogHandler()))
        let log = log
        let events = session.events
        Task { for await event in events { await log.append(event) } }
        try await session.start()
    }

    /// `frames` 20 ms frames of a square wave of `amplitude` (0: silence), returning once the session has weighed
    /// each for barge-in and passed it on (to the relay, or held by its uplink gate while the answer explains it).
    /// `explained`: how much of each frame the answer's audio explains (echo cancellation's measure; nil: none);
    /// `closely` and `linear`: its close reading and what the canceller's linear stage left (`FakeMicrophone.push`).
    func speakHeard(amplitude: Int16, frames: Int, explained: Float? = nil, closely: Float? = nil, linear: Int16? = nil) async -> Bool {
        let before = await session.framesHeard
        await mic.push(amplitude: amplitude, count: frames, echoExplained: explained, echoExplainedClosely: closely, linear: linear)
        return await eventually { await session.framesHeard >= before + frames }
    }

    /// The relay answers: its audio starts playing.
    func answering(seconds: Double = 10, turnId: String = "turn-1") async -> Bool {
        await relay.sendAudio(seconds: seconds, turnId: turnId)
        return await log.waitFor { if case .speakingStarted = $0 { true } else { false } }
    }

    /// Returns once the log holds every event the session emitted before now: a marker (a user's partial words,
    /// which the session shows) goes through the same ordered stream.
    func logCaughtUp() async -> Bool {
        let marker = "marker \(UUID().uuidString.prefix(8))"
        await relay.send(.partial(marker))
        return await log.waitFor { $0 == .partialTranscript(marker) }
    }

    func eventually(_ condition: @escaping @Sendable () async -> Bool) async -> Bool {
        // A bound that only catches a session that never gets there, not a loaded machine.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
