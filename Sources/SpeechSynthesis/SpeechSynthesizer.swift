/// A piece of synthesised speech: mono PCM16 at the engine's native rate. Chunks of one request arrive in
/// order and join without gaps; AudioIO plays them as they are (`PCMBuffer(sampleRate:samples:)`).
package struct SynthesisChunk: Sendable, Equatable {
    package var sampleRate: Int
    package var samples: [Int16]

    package init(sampleRate: Int, samples: [Int16]) {
        self.sampleRate = sampleRate
        self.samples = samples
    }

    package var durationSeconds: Double { sampleRate > 0 ? Double(samples.count) / Double(sampleRate) : 0 }
}

/// How to speak: the engine's voice name, speed and pitch. Values outside the engine's range are brought
/// into it (a directive from the Gateway may ask for anything).
package struct VoiceSettings: Sendable, Equatable {
    /// The engine's voice name (espeak-ng: a language or variant such as `en-us`, `en-gb`, `en+f3`).
    package var voice: String
    /// Words per minute.
    package var rateWPM: Int
    /// 0...100, 50 is the voice's normal pitch.
    package var pitch: Int
    /// The voice the user chose, when `voice` came from elsewhere (a reply's directive): `voice` is then used only
    /// when it is one the engine lists, never an MBROLA voice, and this one is spoken instead. Nil: `voice` is the
    /// user's own choice.
    package var configuredVoice: String?

    package init(voice: String = "en-us", rateWPM: Int = 175, pitch: Int = 50) {
        self.voice = voice
        self.rateWPM = rateWPM
        self.pitch = pitch
    }

    package static let `default` = VoiceSettings()
}

/// The engine-neutral interface the Talk loop, `say` and the benchmark drive; espeak-ng is one implementation.
/// Text goes in (already speakable: see `SpokenReply` and `SpeakableText`), PCM comes out in chunks as it is
/// made, so playback of a long sentence starts before the sentence is done.
///
/// Cancelling the task that iterates a stream, or dropping the stream, stops that synthesis. `cancelAll()` is
/// barge-in: once it returns, no chunk of any earlier request reaches its caller.
package protocol SpeechSynthesizer: Sendable {
    /// The rate of every chunk this engine makes.
    var sampleRate: Int { get }
    /// Synthesises `text`; the stream ends after the last chunk, or throws `SpeechSynthesisError`.
    /// Requests are served one at a time in the order they were made.
    func synthesize(_ text: String, settings: VoiceSettings) -> SynthesisStream
    /// Stops every request in progress or waiting; their streams end with `CancellationError`, also when chunks
    /// made before the call are still waiting to be read.
    func cancelAll()
}

extension SpeechSynthesizer {
    /// The whole utterance in one buffer, for files and tests.
    package func synthesizeAll(_ text: String, settings: VoiceSettings = .default) async throws -> SynthesisChunk {
        var samples: [Int16] = []
        for try await chunk in synthesize(text, settings: settings) { samples += chunk.samples }
        return SynthesisChunk(sampleRate: sampleRate, samples: samples)
    }
}

/// The chunks of one request. Each chunk is checked against the request's generation as it is read, so after
/// `cancelAll()` not even a chunk made before it, and still buffered, reaches the reader: the next read throws
/// `CancellationError`. A read in a cancelled task throws too, and stops the request, also when chunks are waiting.
package struct SynthesisStream: AsyncSequence, Sendable {
    package typealias Element = SynthesisChunk
    private let chunks: AsyncThrowingStream<SynthesisChunk, any Error>
    private let isCurrent: @Sendable () -> Bool
    private let cancel: @Sendable () -> Void

    package init(
        chunks: AsyncThrowingStream<SynthesisChunk, any Error>, isCurrent: @escaping @Sendable () -> Bool,
        cancel: @escaping @Sendable () -> Void
    ) {
        self.chunks = chunks
        self.isCurrent = isCurrent
        self.cancel = cancel
    }

    /// A stream that fails at once.
    package init(failure: any Error) {
        self.init(chunks: AsyncThrowingStream { throw failure }, isCurrent: { true }, cancel: {})
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(inner: chunks.makeAsyncIterator(), isCurrent: isCurrent, cancel: cancel)
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        var inner: AsyncThrowingStream<SynthesisChunk, any Error>.AsyncIterator
        let isCurrent: @Sendable () -> Bool
        let cancel: @Sendable () -> Void

        package mutating func next() async throws -> SynthesisChunk? {
            // A buffered chunk is handed out without a suspension, so cancellation is checked here, not only
            // while waiting.
            guard !Task.isCancelled else {
                cancel()
                throw CancellationError()
            }
            guard let chunk = try await inner.next() else { return nil }
            guard isCurrent() else { throw CancellationError() }
            return chunk
        }
    }
}
