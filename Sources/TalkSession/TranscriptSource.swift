import AudioIO

/// Where an utterance's words come from besides the local recogniser: the Gateway's transcription relay
/// (`RelayTranscription`). The loop tells it when an utterance starts and ends, and asks it for the words at
/// the local final: it answers with the relay's final when that came in time, else the local text, so each
/// utterance gives exactly one transcript.
package protocol TranscriptSource: Sendable {
    /// An utterance opened at `positionMs` (stream ms); `held`: it opened over the reply and may be its echo, so
    /// nothing of it leaves the machine until `utteranceReleased` (or it is dropped: `transcript(discard: true)`).
    func utteranceStarted(positionMs: Int, held: Bool) async
    /// The held utterance is the user's (a barge-in, or speech that went on past the reply): its audio goes out
    /// from a margin before `onsetMs` (stream ms; nil: from its own start), never before its own start.
    func utteranceReleased(onsetMs: Int?) async
    /// `utteranceReleased(onsetMs:)` with the stretch of sound onsets the user's is among (`TurnTaking.userOnsetStretch`):
    /// a source that holds the frames skips its echo's onsets (`TurnTaking.userOnsetMs(of:heardAsEcho:)`); one without
    /// them releases from the stretch's first onset. No default: a default here would be what a direct call on a
    /// conformer whose own method is synchronous reaches, in an async context, instead of the conformer's.
    func utteranceReleased(stretchMs: [Int]) async
    func utteranceEnded(lastSpeechEndMs: Int) async
    /// The words for the utterance that just ended (`discard`: the loop will not use them, do not wait).
    func transcript(localText: String, discard: Bool) async -> TranscriptChoice
    /// Events to report since the last call (relay sessions and their uplink, input falling behind).
    func takeNotes() async -> [TalkEvent.Kind]
    func stop() async
}

/// The words to send for one utterance and which engine produced them.
package struct TranscriptChoice: Sendable, Equatable {
    package var text: String
    package var engine: String
    /// The end of speech (the local endpoint less the silence it waited for) to the relay's final, when the relay's
    /// words are used.
    package var relayMs: Double?
    /// Why the local words are used, when a relay was meant to give them.
    package var fallbackReason: String?

    package init(text: String, engine: String, relayMs: Double? = nil, fallbackReason: String? = nil) {
        self.text = text
        self.engine = engine
        self.relayMs = relayMs
        self.fallbackReason = fallbackReason
    }
}

/// Stands in for the capture device and copies every frame to `frames`, so the relay hears what the listener
/// hears (the caller's device, echo-cancelled if it was wrapped so) without slowing it: a slow reader loses
/// the oldest frames beyond 10 s.
package actor UtteranceAudioTap: AudioCaptureDevice {
    private let inner: any AudioCaptureDevice
    /// The device's executor (`CaptureExecutor`): a frame is copied and passed on where it was yielded.
    private nonisolated let host: any Actor
    package nonisolated var unownedExecutor: UnownedSerialExecutor { host.unownedExecutor }
    package nonisolated let frames: AsyncStream<AudioFrame>
    private let sink: AsyncStream<AudioFrame>.Continuation
    private var forward: Task<Void, Never>?

    package init(_ inner: any AudioCaptureDevice) {
        self.inner = inner
        host = CaptureExecutor.of(inner)
        (frames, sink) = AsyncStream.makeStream(of: AudioFrame.self, bufferingPolicy: .bufferingNewest(500))
    }

    package func start() async throws -> AsyncStream<CaptureEvent> {
        forward?.cancel()
        let events = try await inner.start()
        let (stream, continuation) = AsyncStream.makeStream(of: CaptureEvent.self, bufferingPolicy: .unbounded)
        let sink = sink
        forward = Task { await self.forward(events, to: continuation, copies: sink) }
        return stream
    }

    /// Isolated, so the device's stream resumes it on the device's executor.
    private func forward(
        _ events: AsyncStream<CaptureEvent>, to continuation: AsyncStream<CaptureEvent>.Continuation,
        copies sink: AsyncStream<AudioFrame>.Continuation
    ) async {
        for await event in events {
            if case .frame(let frame) = event { sink.yield(frame) }
            continuation.yield(event)
        }
        continuation.finish()
    }

    package func stop() async {
        forward?.cancel()
        forward = nil
        await inner.stop()
    }
}
