import AudioIO
import Foundation
import SessionBridge
import SpeechSynthesis

/// One turn: the transcript goes out, the reply streams in and is cut into sentences, and the turn's
/// `SentenceSpeaker` synthesises each ahead of playback and plays them in order, waiting for the floor.
extension TalkSession {
    /// A reply's sentence on its way to the speaker, with the voice it is spoken in (the reply's directive sets it).
    struct ReplySentence: Sendable {
        var text: String
        var voice: VoiceSettings
        var remoteVoice: TalkVoiceSettings
    }

    /// The turn's speaker: synthesis runs ahead of playback by the lookahead `say` shares, played in order.
    typealias ReplySpeaker = SentenceSpeaker<ReplySentence>

    /// `Action.sendTurn`: the transcript goes out and the reply is spoken (the machine moved to thinking).
    func startTurn(_ transcript: String, interruptedAtSeconds: Double?, number generation: Int) {
        turnTask = Task { await self.runTurn(transcript, interruptedAtSeconds: interruptedAtSeconds, generation: generation) }
    }

    /// Stops the current turn's work (the machine has left the turn: the work finds itself stale), its sentences'
    /// synthesis with it (a `talk.speak` clip may take 125 s); the speaker is stopped by the caller when it matters.
    func cancelTurn() {
        turnTask?.cancel()
        turnTask = nil
        // The speaker skips what was queued and ends: nothing more is released for this turn.
        speech?.cancel()
        speech = nil
    }

    private func runTurn(_ transcript: String, interruptedAtSeconds: Double?, generation: Int) async {
        let updates = await dependencies.conversation.converse(transcript, interruptedAtSeconds: interruptedAtSeconds)
        guard generation == turn else { return }
        emit(.transcriptSent(text: transcript, interruptedAtSeconds: interruptedAtSeconds))
        let speaker = ReplySpeaker(player: dependencies.playback, hooks: speakingHooks(generation)) { [weak self] sentence in
            let session = self
            return Task {
                guard let make = await session?.synthesis(of: sentence, generation: generation) else { throw CancellationError() }
                return try await make()
            }
        }
        speech = speaker
        let speaking = Task { await speaker.run() }
        var reply = SpokenReply()
        var written = ""
        var (voice, remoteVoice) = voices.forReply(nil)
        func queueSentences(_ sentences: [String]) -> [String] {
            if let directive = reply.directive { (voice, remoteVoice) = voices.forReply(directive) }
            speaker.speak(sentences.map { ReplySentence(text: $0, voice: voice, remoteVoice: remoteVoice) })
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
        if generation == turn { speaker.finish() } else { speaker.cancel() }
        _ = await speaking.value
        guard generation == turn else { return }
        let endedNs = dependencies.clock.nowNs()
        let heardToMs = await gate.heardToMs
        // Where the capture stood when the reply ended, and how long before that its newest frame was captured (the
        // capture's buffering and the canceller's lag): what an utterance's stream position is judged against.
        let behindMs = await gate.heardToCaptureNs.map { String((Int64(bitPattern: endedNs) - Int64(bitPattern: $0)) / 1_000_000) } ?? "-"
        logger.debug("The reply ended", metadata: ["talk.heardToMs": "\(heardToMs)", "talk.captureBehindMs": "\(behindMs)"])
        await handle(.replyEnded(atNs: endedNs, heardToMs: heardToMs))
    }

    /// How a sentence's audio is made, decided as its synthesis starts: the Gateway's voice while it works,
    /// espeak-ng otherwise. The first failure of the Gateway's voice moves the rest of the turn to the local voice.
    private func synthesis(of sentence: ReplySentence, generation: Int) -> @Sendable () async throws -> SpokenAudio {
        let synthesizer = dependencies.synthesizer
        let local: @Sendable () async throws -> SpokenAudio = {
            try await SpokenAudio.local(sentence.text, voice: sentence.voice, synthesizer: synthesizer)
        }
        guard voices.useGateway, !machine.fellBackToLocalVoice(turn: generation), let remote = dependencies.gatewayVoice else {
            return local
        }
        return {
            switch await remote.speak(sentence.text, voice: sentence.remoteVoice) {
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

    /// After a barge-in (the decision taken and carried out): the listener decodes the utterance again from the user's
    /// onset, from the audio a held utterance's release sends the relay (`HeldUtteranceRelease`: a margin before the
    /// onset, the linear stage's output around it), so the local words (`--stt local`, or the relay's fallback) are the
    /// user's as they said them, without the echo's words in front or their first word lost to the echo stages
    /// (`UtteranceRedecode`). With no onset heard the live decode's words stand. The relay's audio does not change.
    func decodeAgainFromUserOnset() async {
        guard let listener, let onset = machine.userOnsetMs() else { return }
        let heardThrough = if let ms = listener.heardThroughMs { ms } else { await gate.heardToMs }
        // The release's own start bound is the utterance's start, which the listener applies.
        let release = HeldUtteranceRelease(startMs: .min, onsetMs: onset, heardThroughMs: heardThrough)
        await listener.decodeAgain(fromMs: release.fromMs) { release.samples(of: $0) }
    }

    /// `Action.weighSoundOverReply`: the onset hold ran out with no utterance open; the machine is told whether the
    /// microphone still hears the user's own sound over the reply, and keeps it lowered or restores it.
    func weighSoundOverReply() async {
        let userSound = await gate.hearsUserSound()
        logger.debug("The onset hold ran out", metadata: ["talk.userSound": "\(userSound)"])
        await handle(.soundOverReply(userSound: userSound))
    }

    private func gatewayVoiceFailed(_ reason: String, generation: Int) async {
        await handle(.gatewayVoiceFailed(turn: generation, reason: reason))
    }

    /// What the turn's speaker reports, told to the machine and as events while the turn is current.
    private func speakingHooks(_ generation: Int) -> ReplySpeaker.Hooks {
        ReplySpeaker.Hooks(
            starting: { [weak self] sentence, audio in await self?.sentenceStarting(sentence, audio, generation) ?? false },
            stopped: { [weak self] sentence, outcome in await self?.sentenceStopped(sentence, outcome, generation) },
            failed: { [weak self] _, failure in await self?.speakingFailed(failure, generation) })
    }

    /// A sentence's audio is ready: it plays once the user is not speaking, if its turn is still current.
    private func sentenceStarting(_ sentence: ReplySentence, _ audio: SpokenAudio, _ generation: Int) async -> Bool {
        await waitForFloor()
        guard generation == turn else { return false }
        let seconds = audio.buffer.durationSeconds
        await handle(.playbackStarted(sentence: sentence.text, seconds: seconds, atNs: dependencies.clock.nowNs()))
        guard generation == turn else { return false }
        emit(.speakingStarted(sentence: sentence.text, voice: audio.voice))
        return true
    }

    private func sentenceStopped(_ sentence: ReplySentence, _ outcome: PlaybackOutcome, _ generation: Int) async {
        emit(.speakingStopped(sentence: sentence.text, completed: outcome == .completed && generation == turn))
        guard generation == turn else { return }
        await handle(.playbackStopped(completed: outcome == .completed))
    }

    private func speakingFailed(_ failure: ReplySpeaker.Failure, _ generation: Int) {
        switch failure {
        case .synthesis(let error):
            if generation == turn { emit(.error("could not synthesise a sentence: \(error)")) }
        case .playback(let error):
            emit(.error("playback failed: \(error)"))
        }
    }
}
