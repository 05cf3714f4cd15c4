import CEspeakNG
import Foundation
import Synchronization
import TalkLogging
import Threading

/// The one owner of espeak-ng in this process. espeak-ng keeps its voice, rate and callback in globals, so every
/// call into it happens on this one dedicated thread, one request at a time in arrival order, whoever asks
/// (also tests running in parallel). Synthesis is CPU-heavy C work and never runs on Swift's cooperative pool;
/// chunks reach async callers through each request's `AsyncThrowingStream`.
///
/// Fencing: each owner (an `EspeakSynthesizer`) has a generation that `cancelAll(owner:)` bumps. A chunk is handed
/// over only while, under the lock, its request is still current, not cancelled, and of its owner's current
/// generation; the same lock guards the bump, so once `cancelAll` returns no late chunk gets through. The C
/// callback then answers "stop", and espeak-ng abandons the rest of the text.
final class EspeakWorker: Sendable {
    static let shared = EspeakWorker()

    /// espeak-ng hands over audio in buffers of this length: short enough that the first one comes quickly.
    static let chunkMilliseconds: Int32 = 40

    struct Request: Sendable {
        let id: UInt64
        let owner: UInt64
        let generation: UInt64
        let text: String
        let settings: VoiceSettings
        let dataFolder: String
        let logger: Logger
        let continuation: AsyncThrowingStream<SynthesisChunk, any Error>.Continuation
    }

    private struct State {
        var queue: [Request] = []
        var current: Request?
        var currentCancelled = false
        var generations: [UInt64: UInt64] = [:]
        var nextID: UInt64 = 0
        var threadStarted = false
        var sampleRate = 0
        var cpuNanoseconds: UInt64 = 0
        /// Samples espeak-ng made for each owner, delivered or not: how tests see that a cancelled request stopped.
        var produced: [UInt64: Int] = [:]
        /// What espeak-ng listed once it started (`say --list-voices`, the voices a directive may choose).
        var voices: EspeakVoices?
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    private init() {}

    /// Queues a request; its chunks arrive on the returned stream. Also returns the request's id (for `cancel`)
    /// and the owner's generation it belongs to (for `isCurrent`).
    func submit(text: String, settings: VoiceSettings, dataFolder: String, owner: UInt64, logger: Logger)
        -> (AsyncThrowingStream<SynthesisChunk, any Error>, id: UInt64, generation: UInt64)
    {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SynthesisChunk.self)
        let (id, generation, startThread) = state.withLock { state in
            state.nextID &+= 1
            let request = Request(
                id: state.nextID, owner: owner, generation: state.generations[owner, default: 0],
                text: text, settings: settings, dataFolder: dataFolder, logger: logger, continuation: continuation)
            state.queue.append(request)
            defer { state.threadStarted = true }
            return (request.id, request.generation, !state.threadStarted)
        }
        continuation.onTermination = { [weak self] _ in self?.cancel(request: id) }
        if startThread {
            NamedThread.start("espeak-ng") { [self] in serve() }
        }
        wake.signal()
        return (stream, id, generation)
    }

    /// False once `cancelAll(owner:)` has been called after a request of this generation was made.
    func isCurrent(owner: UInt64, generation: UInt64) -> Bool {
        state.withLock { $0.generations[owner, default: 0] == generation }
    }

    /// Barge-in for one owner: its waiting and running requests end with `CancellationError`, and nothing more
    /// of them is delivered.
    func cancelAll(owner: UInt64) {
        let cancelled: [Request] = state.withLock { state in
            state.generations[owner, default: 0] &+= 1
            var cancelled = state.queue.filter { $0.owner == owner }
            state.queue.removeAll { $0.owner == owner }
            if let current = state.current, current.owner == owner, !state.currentCancelled {
                state.currentCancelled = true
                cancelled.append(current)
            }
            return cancelled
        }
        // Outside the lock: finishing a stream runs its termination handler, which takes the lock.
        for request in cancelled { request.continuation.finish(throwing: CancellationError()) }
    }

    /// A caller stopped listening: drop the request if it waits, stop it if it runs; its stream ends.
    func cancel(request id: UInt64) {
        let cancelled: Request? = state.withLock { state in
            if let index = state.queue.firstIndex(where: { $0.id == id }) { return state.queue.remove(at: index) }
            guard let current = state.current, current.id == id, !state.currentCancelled else { return nil }
            state.currentCancelled = true
            return current
        }
        // Outside the lock: finishing runs the termination handler, which calls back in here.
        cancelled?.continuation.finish(throwing: CancellationError())
    }

    /// An owner is gone: its bookkeeping goes too.
    func forget(owner: UInt64) {
        state.withLock { state in
            state.generations[owner] = nil
            state.produced[owner] = nil
        }
    }

    /// Samples made so far for an owner's requests (including any dropped after a cancel).
    func producedSamples(owner: UInt64) -> Int { state.withLock { $0.produced[owner, default: 0] } }

    /// The voices espeak-ng listed, once it has started (after any request has run).
    var voices: EspeakVoices? { state.withLock { $0.voices } }

    /// CPU time spent inside espeak-ng so far (its thread's time), for the real-time factor.
    var cpuSeconds: Double { Double(state.withLock { $0.cpuNanoseconds }) / 1e9 }

    /// Called from espeak-ng's callback on the worker thread: hands a chunk to the current request if it is
    /// still wanted. Returns false when synthesis should stop.
    fileprivate func deliver(_ samples: UnsafeBufferPointer<Int16>) -> Bool {
        state.withLock { state in
            guard let request = state.current else { return false }
            state.produced[request.owner, default: 0] += samples.count
            guard !state.currentCancelled, state.generations[request.owner, default: 0] == request.generation
            else { return false }
            if !samples.isEmpty {
                let chunk = SynthesisChunk(sampleRate: state.sampleRate, samples: Array(samples))
                if case .terminated = request.continuation.yield(chunk) { return false }
            }
            return true
        }
    }

    private func serve() {
        var engine = EspeakEngineState()
        while true {
            wake.wait()
            let next: Request? = state.withLock { state in
                guard !state.queue.isEmpty else { return nil }
                let request = state.queue.removeFirst()
                state.current = request
                state.currentCancelled = false
                return request
            }
            guard let request = next else { continue }
            let started = threadCPUNanoseconds()
            let result = Result { try run(request, engine: &engine) }
            let spent = threadCPUNanoseconds() &- started
            let cancelled = state.withLock { state in
                defer { state.current = nil }
                state.cpuNanoseconds &+= spent
                return state.currentCancelled
            }
            request.logger.trace(
                "Synthesis done",
                metadata: [
                    "speech.characters": "\(request.text.count)", "speech.cpu_ms": "\(spent / 1_000_000)",
                    "speech.cancelled": "\(cancelled)", "speech.failed": "\(result.failure.map { "\($0)" } ?? "no")",
                ])
            request.continuation.finish(throwing: result.failure)
        }
    }

    private func run(_ request: Request, engine: inout EspeakEngineState) throws {
        let starting = engine.dataFolder == nil
        let rate = try engine.start(dataFolder: request.dataFolder)
        if starting {
            request.logger.debug(
                "espeak-ng started", metadata: ["speech.data": "\(request.dataFolder)", "speech.sample_rate": "\(rate)"])
        }
        if starting {
            let voices = EspeakVoices.read()
            state.withLock { $0.voices = voices }
        }
        state.withLock { $0.sampleRate = rate }
        try engine.apply(request.settings, voices: state.withLock { $0.voices } ?? EspeakVoices(voices: [], variants: []),
                         logger: request.logger)
        try engine.speak(request.text)
    }
}

/// espeak-ng's side of the worker: what it has been set up with, so unchanged settings are not reloaded.
/// Lives on the worker thread only.
private struct EspeakEngineState {
    var dataFolder: String?
    var sampleRate = 0
    var voice: String?

    /// Starts espeak-ng on first use (synchronous output to our callback). Returns its sample rate.
    mutating func start(dataFolder folder: String) throws -> Int {
        if let dataFolder {
            guard dataFolder == folder else {
                throw SpeechSynthesisError.dataFolderInUse(current: dataFolder, requested: folder)
            }
            return sampleRate
        }
        espeak_ng_InitializePath(folder)
        var context: espeak_ng_ERROR_CONTEXT? = nil
        let status = espeak_ng_Initialize(&context)
        espeak_ng_ClearErrorContext(&context)
        guard status == ENS_OK else { throw SpeechSynthesisError.engineFailed(reason: Self.message(status)) }
        let output = espeak_ng_InitializeOutput(ENOUTPUT_MODE_SYNCHRONOUS, EspeakWorker.chunkMilliseconds, nil)
        guard output == ENS_OK else { throw SpeechSynthesisError.engineFailed(reason: Self.message(output)) }
        espeak_SetSynthCallback(espeakCallback)
        sampleRate = Int(espeak_ng_GetSampleRate())
        dataFolder = folder
        return sampleRate
    }

    /// Sets the voice, rate and pitch. A voice that did not come from the user (`configuredVoice` is set: a reply's
    /// directive chose it) is used only when `voices` lists it, never an MBROLA one; otherwise the user's voice is.
    mutating func apply(_ settings: VoiceSettings, voices: EspeakVoices, logger: Logger) throws {
        var wanted = settings.voice
        if let configured = settings.configuredVoice, configured != settings.voice {
            if let listed = voices.resolve(settings.voice) {
                wanted = listed
            } else {
                logger.warning("a reply asked for a voice that is not listed (say --list-voices); the configured one speaks",
                               metadata: ["speech.voice": "\(settings.voice.prefix(64))", "speech.configured_voice": "\(configured)"])
                wanted = configured
            }
        }
        if voice != wanted {
            // A name is looked up as a file under voices/; anything path-like is refused before espeak-ng sees it.
            // (A listed identifier such as gmw/en-US has its one slash from espeak-ng itself.)
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_+"))
            let fromList = wanted != settings.voice
            guard !wanted.isEmpty, wanted.count <= 64,
                wanted.unicodeScalars.allSatisfy({ $0.isASCII && (allowed.contains($0) || (fromList && $0 == "/")) })
            else { throw SpeechSynthesisError.unknownVoice(wanted) }
            voice = nil
            var status = espeak_ng_SetVoiceByName(wanted)
            if status == ENS_VOICE_NOT_FOUND {
                // Not a voice file name: a language such as en-gb, as espeak-ng's own -v also accepts.
                status = wanted.withCString { name in
                    var selector = espeak_VOICE()
                    selector.languages = name
                    return espeak_ng_SetVoiceByProperties(&selector)
                }
            }
            if status == ENS_VOICE_NOT_FOUND { throw SpeechSynthesisError.unknownVoice(wanted) }
            guard status == ENS_OK else { throw SpeechSynthesisError.synthesisFailed(reason: Self.message(status)) }
            voice = wanted
        }
        // espeak-ng's own ranges; a directive may ask for anything.
        let rate = min(max(settings.rateWPM, Int(espeakRATE_MINIMUM)), Int(espeakRATE_MAXIMUM))
        _ = espeak_ng_SetParameter(espeakRATE, Int32(rate), 0)
        _ = espeak_ng_SetParameter(espeakPITCH, Int32(min(max(settings.pitch, 0), 100)), 0)
    }

    func speak(_ text: String) throws {
        let clean = text.replacingOccurrences(of: "\0", with: "")
        guard clean.contains(where: { !$0.isWhitespace }) else { return }
        let status = clean.withCString { pointer in
            espeak_ng_Synthesize(
                pointer, strlen(pointer) + 1, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_UTF8), nil, nil)
        }
        // A stop asked for by the callback is how cancellation looks from here.
        guard status == ENS_OK || status == ENS_SPEECH_STOPPED else {
            throw SpeechSynthesisError.synthesisFailed(reason: Self.message(status))
        }
    }

    static func message(_ status: espeak_ng_STATUS) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        espeak_ng_GetStatusCodeMessage(status, &buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? "status \(status.rawValue)" : text
    }
}

/// espeak-ng calls this on the worker thread with each buffer (and once with none at the end). Returning 1 stops
/// the synthesis in progress.
private let espeakCallback: @convention(c) (UnsafeMutablePointer<Int16>?, Int32, UnsafeMutablePointer<espeak_EVENT>?)
    -> Int32 = { wav, count, _ in
        let samples = UnsafeBufferPointer(start: wav, count: wav == nil ? 0 : Int(max(count, 0)))
        return EspeakWorker.shared.deliver(samples) ? 0 : 1
    }

private func threadCPUNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

extension Result where Failure == any Error {
    fileprivate var failure: (any Error)? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
