import AudioIO
import SessionBridge
import TalkLogging
import Testing

@testable import TalkSession

/// `RelayTranscription` with an utterance held over the reply, against a fake relay that keeps every sample it was
/// sent (PCM16 at 16 kHz, so each frame's samples arrive as they were: every frame carries its own number): what
/// leaves the machine is only the user's, from a margin before their onset, and an utterance of the echo alone sends
/// nothing.
@Suite struct RelayTranscriptionHoldTests {
    /// Records the audio appended, as samples.
    actor FakeRelay: TranscriptionRelay {
        private(set) var samples: [Int16] = []
        private let (stream, continuation) = AsyncStream.makeStream(of: TalkRelayEvent.self)

        func events() -> AsyncStream<TalkRelayEvent> { stream }
        func openTranscriptionInput(checkCatalog: Bool) -> RealtimeRelayInput {
            RealtimeRelayInput(sessionId: "s1", encoding: "pcm16", sampleRateHz: AudioFrame.sampleRate)
        }
        func append(_ bytes: [UInt8], audioMs: Int) -> TalkRelayClient.AppendOutcome {
            for i in stride(from: 0, to: bytes.count - 1, by: 2) {
                samples.append(Int16(bitPattern: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8))
            }
            return .sent(requests: 1)
        }
        func close() {}
        func stop() { continuation.finish() }

        /// The frame numbers that arrived, in order (each frame's samples are its sequence number).
        var frames: [Int] {
            stride(from: 0, to: samples.count, by: AudioFrame.samplesPerFrame).map { Int(samples[$0]) }
        }
    }

    /// A capture of numbered frames and the source reading it.
    struct Harness {
        let relay = FakeRelay()
        let source: RelayTranscription
        let capture: AsyncStream<AudioFrame>.Continuation
        var next: UInt64 = 0

        init() {
            let (frames, capture) = AsyncStream.makeStream(of: AudioFrame.self)
            self.capture = capture
            source = RelayTranscription(client: relay, frames: frames, logger: Logger(label: "relay-test", handler: InMemoryLogHandler()))
        }

        /// Captures frames through `ms` (stream ms) and waits until the source has taken them in.
        mutating func hear(throughMs ms: Int) async throws {
            while Int(next) * AudioFrame.durationMs < ms {
                capture.yield(AudioFrame(sequence: next, captureTimeNs: next * 20_000_000,
                                         samples: [Int16](repeating: Int16(next), count: AudioFrame.samplesPerFrame)))
                next += 1
            }
            try await Self.eventually { await source.heardThroughMs >= ms }
        }

        /// Waits until frame `sequence` has reached the relay.
        func relayed(through sequence: Int) async throws {
            try await Self.eventually { await relay.frames.last.map { $0 >= sequence } ?? false }
        }

        /// Polls for a condition the source's own tasks make true (frames are read, and audio sent, off the caller);
        /// records an issue when it does not within 20 s.
        static func eventually(_ condition: () async -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(20)
            while !(await condition()) {
                guard ContinuousClock.now < deadline else {
                    Issue.record("timed out")
                    return
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    /// The echo opened the utterance at 1 s; the user began at 2 s and cut the reply off: the relay gets their audio
    /// from the release margin (`HeldUtteranceRelease.Settings.marginMs`) before that, then what follows as it is heard, and nothing of the echo before.
    @Test func `a released utterance reaches the relay from the user's onset less the margin, and streams on`() async throws {
        var h = Harness()
        try await h.hear(throughMs: 1200)
        await h.source.utteranceStarted(positionMs: 1000, held: true)
        try await h.hear(throughMs: 2600)
        await h.source.utteranceReleased(onsetMs: 2000)
        try await h.hear(throughMs: 3000)
        try await h.relayed(through: 149)
        let first = (2000 - RelayTranscription.Settings().release.marginMs) / AudioFrame.durationMs
        let frames = await h.relay.frames
        #expect(frames.first == first, "the relay's audio starts \(frames.first.map { $0 * 20 } ?? -1) ms in; the user's onset less the margin is \(first * 20)")
        #expect(frames == Array(first...149), "every frame from there on, once and in order")
        await h.source.stop()
    }

    /// Released with no onset known, it goes from its own start (its pre-roll), as an utterance opened away from the reply.
    @Test func `released with no onset known it goes from its pre-roll`() async throws {
        var h = Harness()
        try await h.hear(throughMs: 1200)
        await h.source.utteranceStarted(positionMs: 1000, held: true)
        try await h.hear(throughMs: 2000)
        await h.source.utteranceReleased(onsetMs: nil)
        try await h.relayed(through: 99)
        let first = (1000 - RelayTranscription.Settings().preRollMs) / AudioFrame.durationMs
        #expect(await h.relay.frames.first == first)
        await h.source.stop()
    }

    /// The machine (`TurnTaking+Relay`) tells the source; the harness carries out its steps and answers its question
    /// about speech past the reply's echo as the devices would, from where the user speaks (`userSpeech`, stream ms).
    struct Loop {
        var machine = TurnTaking(TurnTakingRelayTests.relays)
        let userSpeech: Range<Int>

        mutating func handle(_ event: TurnTaking.Event, _ source: RelayTranscription) async {
            for action in machine.handle(event) {
                switch action {
                case .relay(.started(let positionMs, let held)): await source.utteranceStarted(positionMs: positionMs, held: held)
                case .relay(.released(let onsetMs)): await source.utteranceReleased(onsetMs: onsetMs)
                case .relay(.ended(let lastSpeechEndMs)): await source.utteranceEnded(lastSpeechEndMs: lastSpeechEndMs)
                case .relay(.dropped): _ = await source.transcript(localText: "", discard: true)
                case .weighSpeechPastEcho(let fromMs, let throughMs):
                    await handle(.speechPastEcho(throughMs: throughMs, heard: userSpeech.overlaps(fromMs..<throughMs)), source)
                default: break
                }
            }
        }
    }

    /// The echo opened the utterance at 1 s, the user began at 2 s without cutting the reply off, and the reply ended
    /// where the stream stood at 3 s; they speak on to 10 s, longer than the source's 6 s of frames. Their speech past
    /// the echo's tail (3.7 s) releases it while they speak: the relay has their audio from their onset less the
    /// margin before the utterance ends, and every frame after, once and in order. Held to its end, the relay would
    /// get it all at once after they stopped, and the ring would have lost their first 4 s.
    @Test func `speech past the reply's echo reaches the relay from the user's onset while they still speak`() async throws {
        var h = Harness()
        var loop = Loop(userSpeech: 2000..<10_000)
        for event in TurnTakingTests.speaking { await loop.handle(event, h.source) }
        try await h.hear(throughMs: 1200)
        await loop.handle(.speechStarted(positionMs: 1000, atNs: 1_200_000_000), h.source)
        try await h.hear(throughMs: 2040)
        await loop.handle(.soundOnset(positionMs: 2000), h.source)
        try await h.hear(throughMs: 3000)
        await loop.handle(.replyEnded(atNs: 3_000_000_000, heardToMs: 3000), h.source)
        try await h.hear(throughMs: 4000)
        await loop.handle(.partial("go forward", atNs: 4_000_000_000, endMs: 4000), h.source)
        // The user speaks on: nothing has told the source the utterance ended.
        try await h.hear(throughMs: 10_000)
        try await h.relayed(through: 499)
        let first = (2000 - RelayTranscription.Settings().release.marginMs) / AudioFrame.durationMs
        let frames = await h.relay.frames
        #expect(frames.first == first, "the relay's audio starts \(frames.first.map { $0 * 20 } ?? -1) ms in; the user's onset less the margin is \(first * 20)")
        #expect(frames == Array(first...499), "every frame from the user's onset less the margin on, once and in order, before the utterance ends")
        await loop.handle(.speechEnded(lastSpeechEndMs: 10_000, closedAtMs: 10_700, endedNs: 10_000_000_000), h.source)
        await h.source.stop()
    }

    /// The echo alone opened an utterance over the reply and no barge-in came: it is dropped, and the next utterance
    /// (after the reply) is the first audio the relay ever gets.
    @Test func `an utterance of the echo alone sends nothing`() async throws {
        var h = Harness()
        try await h.hear(throughMs: 1200)
        await h.source.utteranceStarted(positionMs: 1000, held: true)
        try await h.hear(throughMs: 2400)
        let dropped = await h.source.transcript(localText: "", discard: true)
        #expect(dropped.fallbackReason == "held over the reply and dropped unsent")
        await h.source.utteranceStarted(positionMs: 4000, held: false)
        try await h.hear(throughMs: 4600)
        try await h.relayed(through: 229)
        let frames = await h.relay.frames
        let first = (4000 - RelayTranscription.Settings().preRollMs) / AudioFrame.durationMs
        #expect(frames.first == first, "frames before \(first) reached the relay: \(frames.prefix(5))")
        #expect(!frames.contains { $0 < 100 }, "none of the echo's utterance (frames 30 to 119) left the machine")
        await h.source.stop()
    }
}
