import AudioIO
import SpeechSynthesis
import Synchronization
import Testing

@testable import TalkSession

/// The sentence speaker both the Talk loop and `say` speak through: the sentences play in the order they came
/// whichever is made first, a cut silences the one playing and cancels the synthesis of the rest, and synthesis runs
/// no further ahead of playback than `SentenceLookahead` allows.
// A speaker that breaks a rule may never play what a test waits for: the limit turns that wait into a failure, and
// each test cuts the speaker before it waits for it to end.
@Suite(.timeLimit(.minutes(1))) struct SentenceSpeakerTests {
    /// Synthesis the test finishes by hand: each sentence's task waits for `make(_:)`; `started` lists the sentences
    /// whose synthesis began, in order, as the speaker asked for them.
    final class HandMadeVoice: Sendable {
        private struct State {
            var started: [Int] = []
            var tasks: [Int: Task<SpokenAudio, any Error>] = [:]
            var waiting: [Int: [CheckedContinuation<Void, Never>]] = [:]
            var ready: Set<Int> = []
        }
        private let state = Mutex(State())

        var started: [Int] { state.withLock { $0.started } }
        func task(_ sentence: Int) -> Task<SpokenAudio, any Error>? { state.withLock { $0.tasks[sentence] } }

        func synthesize(_ sentence: Int) -> Task<SpokenAudio, any Error> {
            state.withLock { state in
                state.started.append(sentence)
                let task = Task<SpokenAudio, any Error> {
                    await withCheckedContinuation { continuation in
                        let resume = self.state.withLock { state -> Bool in
                            if state.ready.contains(sentence) { return true }
                            state.waiting[sentence, default: []].append(continuation)
                            return false
                        }
                        if resume { continuation.resume() }
                    }
                    try Task.checkCancellation()
                    // The sentence's number is its only sample: what the speaker plays says which sentence it was.
                    return SpokenAudio(buffer: PCMBuffer(sampleRate: 16_000, samples: [Int16(sentence)]), voice: "hand")
                }
                state.tasks[sentence] = task
                return task
            }
        }

        /// Sentence `n`'s audio is ready.
        func make(_ sentence: Int) {
            let waiters = state.withLock { state in
                state.ready.insert(sentence)
                return state.waiting.removeValue(forKey: sentence) ?? []
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// A player whose each sentence plays until the test completes it or `stop()` cuts it; `plays` yields each
    /// sentence as it starts.
    actor HandPlayer: AudioPlaybackDevice {
        nonisolated let plays: AsyncStream<Int>
        private let playing: AsyncStream<Int>.Continuation
        private(set) var played: [Int] = []
        private(set) var stops = 0
        private var current: CheckedContinuation<PlaybackOutcome, Never>?

        init() { (plays, playing) = AsyncStream.makeStream(of: Int.self) }

        func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome {
            let sentence = Int(buffer.samples[0])
            played.append(sentence)
            return await withCheckedContinuation {
                current = $0
                playing.yield(sentence)
            }
        }

        func complete() {
            current?.resume(returning: .completed)
            current = nil
        }

        func stop() {
            stops += 1
            current?.resume(returning: .stopped)
            current = nil
        }

        func setGain(_ gain: Float) {}
        func close() {}
    }

    @Test func `sentences play in the order they came when a later one is made first`() async throws {
        let voice = HandMadeVoice(), player = HandPlayer()
        let speaker = SentenceSpeaker<Int>(player: player, synthesize: voice.synthesize)
        speaker.speak([1, 2, 3])
        speaker.finish()
        let running = Task { await speaker.run() }
        var plays = player.plays.makeAsyncIterator()
        // The second sentence is ready before the first: it waits for it.
        voice.make(2)
        _ = try await #require(voice.task(2)).value
        #expect(await player.played.isEmpty, "the second played before the first was made")
        voice.make(1)
        #expect(await plays.next() == 1)
        await player.complete()
        #expect(await plays.next() == 2)
        voice.make(3)
        await player.complete()
        #expect(await plays.next() == 3)
        await player.complete()
        #expect(await player.played == [1, 2, 3])
        await speaker.cut()  // ends it whatever broke
        let summary = await running.value
        #expect(summary.completed == 3 && summary.failure == nil)
    }

    @Test func `a cut stops the sentence playing and cancels the synthesis of the rest`() async throws {
        let voice = HandMadeVoice(), player = HandPlayer()
        let stopped = Mutex<[PlaybackOutcome]>([])
        let speaker = SentenceSpeaker<Int>(player: player, hooks: .init(stopped: { _, outcome in stopped.withLock { $0.append(outcome) } }),
                                           synthesize: voice.synthesize)
        speaker.speak([1, 2, 3, 4])
        let running = Task { await speaker.run() }
        var plays = player.plays.makeAsyncIterator()
        voice.make(1)
        #expect(await plays.next() == 1)
        await speaker.cut()
        #expect(await player.stops == 1, "the player was not stopped")
        // 2 and 3 were being made (the lookahead's two); 4 never started.
        #expect(voice.started == [1, 2, 3])
        #expect(voice.task(2)?.isCancelled == true && voice.task(3)?.isCancelled == true, "the synthesis ahead goes on after the cut")
        // Sentences given after the cut start nothing.
        speaker.speak([5])
        #expect(voice.started == [1, 2, 3])
        voice.make(2)
        voice.make(3)
        await player.complete()  // in case the cut did not stop it
        let summary = await running.value
        #expect(summary.cut && summary.completed == 0)
        #expect(await player.played == [1], "nothing plays after a cut")
        #expect(stopped.withLock { $0 } == [.stopped])
    }

    @Test func `synthesis runs no further ahead of the sentence playing than the lookahead allows`() async throws {
        let voice = HandMadeVoice(), player = HandPlayer()
        let speaker = SentenceSpeaker<Int>(player: player, synthesize: voice.synthesize)
        speaker.speak([1, 2, 3, 4, 5, 6])
        let running = Task { await speaker.run() }
        var plays = player.plays.makeAsyncIterator()
        #expect(SentenceLookahead<Int>.ahead == 2)
        #expect(voice.started == [1, 2], "before anything plays")
        voice.make(1)
        #expect(await plays.next() == 1)
        #expect(voice.started == [1, 2, 3], "while the first plays")
        await player.complete()
        // The second is not made yet: nothing more starts until the player takes it.
        voice.make(2)
        #expect(await plays.next() == 2)
        #expect(voice.started == [1, 2, 3, 4], "while the second plays")
        await speaker.cut()
        #expect(await running.value.completed == 1)
        #expect(voice.started == [1, 2, 3, 4], "after the cut")
    }
}
