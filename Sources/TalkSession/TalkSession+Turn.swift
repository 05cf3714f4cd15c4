import AudioIO
import Foundation
import SessionBridge
import SpeechSynthesis

/// One turn: the transcript goes out, the reply streams in and is cut into sentences, each sentence is
/// synthesised as soon as it is complete (so the next is ready while one plays) and played in order.
extension TalkSession {
    /// A sentence on its way to the speaker: its audio is being made while earlier sentences play.
    struct SpeechJob: Sendable {
        var sentence: String
        var audio: Task<SpokenAudio, any Error>
    }

    struct SpokenAudio: Sendable {
        var buffer: PCMBuffer
        var voice: String
    }

    /// A turn's sentences on their way to synthesis: at most `SentenceLookahead.ahead` in front of the one playing
    /// (the policy `say` shares), for the turn `generation`, queued to the speaker as they start.
    struct SpeechLookahead {
        struct Held: Sendable {
            var sentence: String
            var voice: VoiceSettings
            var remoteVoice: TalkVoiceSettings
        }

        var generation = 0
        var sentences = SentenceLookahead<Held>()
        var queue: AsyncStream<SpeechJob>.Continuation?
    }

    /// `Action.sendTurn`: the transcript goes out and the reply is spoken (the machine moved to thinking).
    func startTurn(_ transcript: String, interruptedAtSeconds: Double?) {
        turn += 1
        let generation = turn
        turnTask = Task { await self.runTurn(transcript, interruptedAtSeconds: interruptedAtSeconds, generation: generation) }
    }

    /// Makes the current turn stale and stops its work, its sentences' synthesis with it (a `talk.speak` clip may
    /// take 125 s); the speaker is stopped by the caller when it matters.
    func cancelTurn() {
        turn += 1
        turnTask?.cancel()
        turnTask = nil
        for synthesis in turnSynthesis { synthesis.cancel() }
        turnSynthesis = []
        // The speaker skips what was queued and ends: nothing more is released for this turn.
        lookahead.queue?.finish()
        lookahead = SpeechLookahead()
    }

    private func runTurn(_ transcript: String, interruptedAtSeconds: Double?, generation: Int) async {
        let updates = await dependencies.conversation.converse(transcript, interruptedAtSeconds: interruptedAtSeconds)
        guard generation == turn else { return }
        emit(.transcriptSent(text: transcript, interruptedAtSeconds: interruptedAtSeconds))
        let (jobs, queue) = AsyncStream.makeStream(of: SpeechJob.self)
        lookahead = SpeechLookahead(generation: generation, queue: queue)
        let speaker = Task { await self.speak(jobs, generation: generation) }
        var reply = SpokenReply()
        var written = ""
        var voice = settings.voice
        var remoteVoice = gatewayVoice(for: nil)
        func queueSentences(_ sentences: [String]) -> [String] {
            if let directive = reply.directive {
                remoteVoice = gatewayVoice(for: directive)
                let base = settings.voice
                voice = directive.applied(to: base)
                if settings.voiceFixed { voice.voice = base.voice }
                if settings.rateFixed { voice.rateWPM = base.rateWPM }
            }
            let held = sentences.map { SpeechLookahead.Held(sentence: $0, voice: voice, remoteVoice: remoteVoice) }
            if lookahead.generation == generation { start(lookahead.sentences.hold(held), generation) }
            return sentences
        }
        for await update in updates {
            guard generation == turn else { break }
            // What the agent wrote (nothing for an acknowledgement, which does not count: an agent that never
            // writes a word must not hold the loop).
            let wrote: [String]?
            switch update {
            case .accepted(let runId, let status):
                emit(.transcriptAcknowledged(runId: runId, status: status))
                wrote = nil
            case .partial(let text, let replaced):
                if replaced || !text.hasPrefix(written) {
                    emit(.replyDelta(text))
                    wrote = queueSentences(reply.replace(with: text))
                } else if text.count > written.count {
                    let delta = String(text.dropFirst(written.count))
                    emit(.replyDelta(delta))
                    wrote = queueSentences(reply.append(delta))
                } else {
                    wrote = []
                }
                written = text
            case .final(let text, _):
                wrote = queueSentences(reply.replace(with: text) + reply.finish())
                emit(.replyFinal(text))
            case .aborted(let text):
                wrote = queueSentences(reply.finish())
                emit(.replyFailed("the reply was aborted after \(text.count) characters"))
            case .failed(let failure):
                emit(.replyFailed(failure.description))
                wrote = []
            }
            // The reply timeout is off, and the text guard knows what the reply says.
            if let wrote { await handle(.replySentences(wrote)) }
        }
        if generation == turn, lookahead.generation == generation {
            lookahead.sentences.finish()
            start([], generation)
        } else {
            queue.finish()
        }
        await speaker.value
        guard generation == turn else { return }
        await handle(.replyEnded(atNs: dependencies.clock.nowNs(), heardToMs: await gate.heardToMs))
    }

    /// Starts the synthesis of `sentences` (the lookahead released them) and queues them to the speaker; ends the
    /// speaker's queue once the reply is complete and nothing is held.
    private func start(_ sentences: [SpeechLookahead.Held], _ generation: Int) {
        guard generation == turn, lookahead.generation == generation else { return }
        for next in sentences {
            let synthesis = audio(for: next.sentence, voice: next.voice, remoteVoice: next.remoteVoice, generation: generation)
            turnSynthesis.append(synthesis)
            lookahead.queue?.yield(SpeechJob(sentence: next.sentence, audio: synthesis))
        }
        if lookahead.sentences.drained { lookahead.queue?.finish() }
    }

    /// The speaker took a sentence (its audio is ready, or failed): the next held one may start.
    private func sentenceTaken(_ generation: Int) {
        guard generation == turn, lookahead.generation == generation else { return }
        start(lookahead.sentences.took(), generation)
    }

    /// Starts making a sentence's audio now: the Gateway's voice while it works, espeak-ng otherwise. The first
    /// failure of the Gateway's voice moves the rest of the turn to the local voice.
    private func audio(for sentence: String, voice: VoiceSettings, remoteVoice: TalkVoiceSettings, generation: Int)
        -> Task<SpokenAudio, any Error>
    {
        let synthesizer = dependencies.synthesizer
        let local: @Sendable () async throws -> SpokenAudio = {
            let chunk = try await synthesizer.synthesizeAll(sentence, settings: voice)
            return SpokenAudio(buffer: PCMBuffer(sampleRate: chunk.sampleRate, samples: chunk.samples), voice: "local:\(voice.voice)")
        }
        guard settings.useGatewayVoice, gatewayVoiceFailedTurn != generation, let remote = dependencies.gatewayVoice else {
            return Task(operation: local)
        }
        return Task {
            switch await remote.speak(sentence, voice: remoteVoice) {
            case .audio(let buffer):
                return SpokenAudio(buffer: buffer, voice: "gateway")
            case .useLocalVoice(let reason):
                // Cancelled with its turn: the request ended early, and no local voice takes over.
                try Task.checkCancellation()
                await self.gatewayVoiceFailed(reason, generation: generation)
                return try await local()
            }
        }
    }

    private func gatewayVoiceFailed(_ reason: String, generation: Int) {
        guard generation == turn else { return }
        if gatewayVoiceFailedTurn != generation { emit(.voiceFallback(reason: reason)) }
        gatewayVoiceFailedTurn = generation
    }

    /// Plays the turn's sentences in order, each once its audio is ready and the user is not speaking.
    private func speak(_ jobs: AsyncStream<SpeechJob>, generation: Int) async {
        for await job in jobs {
            guard generation == turn else {
                job.audio.cancel()
                continue
            }
            let audio: SpokenAudio
            do {
                audio = try await job.audio.value
                sentenceTaken(generation)
            } catch {
                sentenceTaken(generation)
                if generation == turn, !(error is CancellationError) { emit(.error("could not synthesise a sentence: \(error)")) }
                continue
            }
            await waitForFloor()
            guard generation == turn else { continue }
            let seconds = audio.buffer.durationSeconds
            await handle(.playbackStarted(sentence: job.sentence, seconds: seconds, atNs: dependencies.clock.nowNs()))
            guard generation == turn else { continue }
            emit(.speakingStarted(sentence: job.sentence, voice: audio.voice))
            let outcome: PlaybackOutcome
            do {
                outcome = try await dependencies.playback.play(audio.buffer)
            } catch {
                emit(.error("playback failed: \(error)"))
                outcome = .stopped
            }
            emit(.speakingStopped(sentence: job.sentence, completed: outcome == .completed && generation == turn))
            guard generation == turn else { continue }
            await handle(.playbackStopped(completed: outcome == .completed))
            if outcome != .completed { break }
        }
    }
}
