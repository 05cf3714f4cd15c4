import SpeechRecognition

/// The loop's side of a `TranscriptSource` (the Gateway's transcription relay): `TurnTaking+Relay` decides which
/// utterances go to it (in wake-phrase mode, nothing before the phrase was found locally); the actor tells it, at a
/// relayed utterance's final takes the source's words instead of the local ones, and answers the machine's questions
/// about an utterance held over the reply from the gate (where a cut reply stopped, speech past the reply's echo).
extension TalkSession {
    /// `Action.relay`.
    func relay(_ step: TurnTaking.RelayStep) async {
        guard let source = dependencies.transcriptSource else { return }
        switch step {
        case .started(let positionMs, let held): await source.utteranceStarted(positionMs: positionMs, held: held)
        case .released(let onsetMs):
            // The source judges the stretch's echo onsets by its frames; the machine's onset is the stretch's first.
            let stretch = machine.userOnsetStretch()
            if let onsetMs, stretch.first == onsetMs {
                await source.utteranceReleased(stretchMs: stretch)
            } else {
                await source.utteranceReleased(onsetMs: onsetMs)
            }
        case .ended(let lastSpeechEndMs): await source.utteranceEnded(lastSpeechEndMs: lastSpeechEndMs)
        case .dropped: _ = await source.transcript(localText: "", discard: true)
        case .takeFinal: break  // the final's caller asks (`relayedFinal`)
        }
    }

    /// `Action.findReplyStop`: where the capture stream stands now that the cut reply has stopped, for the held
    /// utterance (`TurnTaking+Relay`).
    func findReplyStop() async {
        await handle(.replyStopped(heardToMs: await gate.heardToMs))
    }

    /// `Action.weighSpeechPastEcho`: whether the microphone heard speech past the reply's echo, through the held
    /// utterance's partial; the machine releases it if so.
    func weighSpeechPastEcho(fromMs: Int, throughMs: Int) async {
        let heard = await gate.heardSound(fromMs: fromMs, throughMs: throughMs)
        logger.debug("sound past the reply's echo", metadata: ["talk.fromMs": "\(fromMs)", "talk.throughMs": "\(throughMs)", "talk.heard": "\(heard)"])
        await handle(.speechPastEcho(throughMs: throughMs, heard: heard))
    }

    /// The final with the words to send and the engine that produced them (nil: the local recogniser).
    func relayedFinal(_ result: UtteranceResult) async -> (UtteranceResult, String?) {
        guard let source = dependencies.transcriptSource else { return (result, nil) }
        let local = result.hypothesis.text.trimmingCharacters(in: .whitespacesAndNewlines)
        // A final heard while the reply plays starts no turn: no reason to wait for the relay's words.
        let choice = await source.transcript(localText: local, discard: state == .speaking)
        for note in await source.takeNotes() { emit(note) }
        emit(.transcriptSource(engine: choice.engine, relayMs: choice.relayMs, fallbackReason: choice.fallbackReason))
        var chosen = result
        chosen.hypothesis.text = choice.text
        return (chosen, choice.engine)
    }
}
