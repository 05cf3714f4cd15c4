import AudioIO
import SpeechSynthesis
import Synchronization

/// Speaks sentences as they come, as the Talk loop speaks a reply and `say` speaks text: each sentence's audio is
/// started as `SentenceLookahead` releases it (at most `ahead` in front of the one playing), and the audio is
/// played in the order the sentences came, whichever is made first, through the player it is given. `cut()` stops
/// the playing sentence and cancels the synthesis of the rest.
///
/// The owner gives the sentences (`speak`, then `finish`), runs `run()` once, and hears back through `Hooks`:
/// before each sentence plays (where the loop waits for the floor and may skip it), when it stopped, and what failed.
/// Its state is one lock's: `speak`, `finish` and `cancel` are synchronous, so an actor that cuts its reply knows the
/// rest is cancelled before it does anything else.
/// A sentence's audio, and the voice that made it (for the loop's `speakingStarted`).
package struct SpokenAudio: Sendable {
    package var buffer: PCMBuffer
    package var voice: String

    package init(buffer: PCMBuffer, voice: String) {
        self.buffer = buffer
        self.voice = voice
    }

    /// `text` in the local voice (espeak-ng in process), made whole.
    package static func local(_ text: String, voice: VoiceSettings, synthesizer: any SpeechSynthesizer) async throws -> SpokenAudio {
        let chunk = try await synthesizer.synthesizeAll(text, settings: voice)
        return SpokenAudio(buffer: PCMBuffer(sampleRate: chunk.sampleRate, samples: chunk.samples), voice: "local:\(voice.voice)")
    }
}

package final class SentenceSpeaker<Sentence: Sendable>: Sendable {
    package typealias Audio = SpokenAudio

    package enum Failure: Sendable {
        /// A sentence's audio could not be made (it is skipped; the rest are spoken).
        case synthesis(any Error)
        /// The player failed (the sentence counts as stopped, and speaking ends).
        case playback(any Error)

        package var error: any Error {
            switch self {
            case .synthesis(let error), .playback(let error): error
            }
        }
    }

    package struct Hooks: Sendable {
        /// A sentence's audio is ready and nothing plays: may it play now? The Talk loop waits here while the user
        /// speaks, and says the sentence started; false skips it.
        package var starting: @Sendable (Sentence, Audio) async -> Bool
        /// The sentence stopped playing (`.stopped`: cut, or the player failed; then nothing more plays).
        package var stopped: @Sendable (Sentence, PlaybackOutcome) async -> Void
        /// Something failed while speaking (not a cancellation, and not after a cut).
        package var failed: @Sendable (Sentence, Failure) async -> Void

        package init(
            starting: @escaping @Sendable (Sentence, Audio) async -> Bool = { _, _ in true },
            stopped: @escaping @Sendable (Sentence, PlaybackOutcome) async -> Void = { _, _ in },
            failed: @escaping @Sendable (Sentence, Failure) async -> Void = { _, _ in }
        ) {
            self.starting = starting
            self.stopped = stopped
            self.failed = failed
        }
    }

    /// What `run()` did.
    package struct Summary: Sendable {
        /// Sentences played to their end, and their seconds.
        package var completed = 0
        package var seconds = 0.0
        /// The first failure, if any.
        package var failure: Failure?
        /// `cut()` (or `cancel()`) ended it.
        package var cut = false
        /// When the first sentence's audio went to the player.
        package var firstAudio: ContinuousClock.Instant?
    }

    private struct Job: Sendable {
        var sentence: Sentence
        var audio: Task<Audio, any Error>
    }

    private struct State {
        var lookahead = SentenceLookahead<Sentence>()
        /// Synthesis started and not yet taken by the player, in order.
        var pending: [Task<Audio, any Error>] = []
        var cut = false
        /// `run()` ended: nothing more is started.
        var ended = false
    }

    private let player: any AudioPlaybackDevice
    private let synthesize: @Sendable (Sentence) -> Task<Audio, any Error>
    private let hooks: Hooks
    private let state = Mutex(State())
    private let jobs: AsyncStream<Job>
    private let queue: AsyncStream<Job>.Continuation

    /// - Parameter synthesize: starts making a sentence's audio (called as the lookahead releases it) and returns
    ///   the task making it; the speaker cancels it on a cut.
    package init(
        player: any AudioPlaybackDevice, hooks: Hooks = Hooks(),
        synthesize: @escaping @Sendable (Sentence) -> Task<Audio, any Error>
    ) {
        self.player = player
        self.hooks = hooks
        self.synthesize = synthesize
        (jobs, queue) = AsyncStream.makeStream(of: Job.self)
    }

    /// Holds `sentences` behind those before; their synthesis starts as the lookahead releases them.
    package func speak(_ sentences: [Sentence]) {
        state.withLock { state in
            guard !state.cut, !state.ended else { return }
            start(state.lookahead.hold(sentences), &state)
        }
    }

    /// No more sentences will come: `run()` ends after the last plays.
    package func finish() {
        state.withLock { state in
            state.lookahead.finish()
            start([], &state)
        }
    }

    /// Stops speaking without touching the player: the synthesis of what is pending is cancelled, nothing more
    /// starts or plays, and `run()` ends (a sentence playing ends when the player is stopped).
    package func cancel() {
        let pending = state.withLock { state -> [Task<Audio, any Error>] in
            state.cut = true
            return end(&state)
        }
        for synthesis in pending { synthesis.cancel() }
    }

    /// `cancel()`, and the player stopped at once.
    package func cut() async {
        cancel()
        await player.stop()
    }

    /// Plays the sentences in order as their audio is ready, until `finish()`'s last has played, a sentence
    /// stopped short, or a cut. Run it once.
    package func run() async -> Summary {
        var summary = Summary()
        for await job in jobs {
            if isCut {
                job.audio.cancel()
                continue
            }
            let audio: Audio
            do {
                audio = try await job.audio.value
                took()
            } catch {
                took()
                if !isCut, !(error is CancellationError) { await fail(job.sentence, .synthesis(error), &summary) }
                continue
            }
            guard !isCut, await hooks.starting(job.sentence, audio) else { continue }
            var outcome = PlaybackOutcome.stopped
            // Cut while the owner let it start: it stops as it starts, unheard.
            if !isCut {
                if summary.firstAudio == nil { summary.firstAudio = .now }
                do {
                    outcome = try await player.play(audio.buffer)
                } catch {
                    await fail(job.sentence, .playback(error), &summary)
                }
            }
            if outcome == .completed {
                summary.completed += 1
                summary.seconds += audio.buffer.durationSeconds
            }
            await hooks.stopped(job.sentence, outcome)
            if outcome != .completed { break }
        }
        let pending = state.withLock { state in
            summary.cut = state.cut
            return end(&state)
        }
        for synthesis in pending { synthesis.cancel() }
        return summary
    }

    private var isCut: Bool { state.withLock { $0.cut } }

    private func fail(_ sentence: Sentence, _ failure: Failure, _ summary: inout Summary) async {
        if summary.failure == nil { summary.failure = failure }
        await hooks.failed(sentence, failure)
    }

    /// The player took a sentence (its audio was ready, or failed): the next held ones may start.
    private func took() {
        state.withLock { state in
            guard !state.cut, !state.ended else { return }
            if !state.pending.isEmpty { state.pending.removeFirst() }
            start(state.lookahead.took(), &state)
        }
    }

    /// Starts the synthesis of `released` and queues it to the player, in order (under the lock, so two callers'
    /// sentences cannot swap); ends the queue once every sentence is given out.
    private func start(_ released: [Sentence], _ state: inout State) {
        for sentence in released {
            let audio = synthesize(sentence)
            state.pending.append(audio)
            queue.yield(Job(sentence: sentence, audio: audio))
        }
        if state.lookahead.drained { queue.finish() }
    }

    /// Nothing more starts or plays; returns the synthesis still pending, for the caller to cancel outside the lock.
    private func end(_ state: inout State) -> [Task<Audio, any Error>] {
        state.ended = true
        queue.finish()
        let pending = state.pending
        state.pending = []
        return pending
    }
}

extension SentenceSpeaker where Sentence == String {
    /// Speaks `sentences` in the local voice through `player` as the Talk loop speaks a reply (`say`, and
    /// `send --speak` without a daemon); a task cancelled cuts it.
    package static func speakLocally(
        _ sentences: [String], voice: VoiceSettings, synthesizer: any SpeechSynthesizer, player: any AudioPlaybackDevice
    ) async -> Summary {
        let speaker = SentenceSpeaker(player: player) { sentence in
            Task { try await SpokenAudio.local(sentence, voice: voice, synthesizer: synthesizer) }
        }
        speaker.speak(sentences)
        speaker.finish()
        return await withTaskCancellationHandler {
            await speaker.run()
        } onCancel: {
            speaker.cancel()
        }
    }
}
