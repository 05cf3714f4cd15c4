import SpeechRecognition

/// The loop's side of a `TranscriptSource` (the Gateway's transcription relay): it hears of each utterance's
/// start and end, and at the local final it takes the source's words instead of the local ones. Only an utterance
/// that opens while the mode lets sound leave the machine (`mayLeaveMachine`) goes to it: in wake-phrase mode,
/// nothing before the phrase was found locally.
extension TalkSession {
    func relayUtteranceStarted(_ positionMs: Int) async {
        guard mayLeaveMachine else {
            await dropRelayedUtterance()
            return
        }
        relayingUtterance = true
        await dependencies.transcriptSource?.utteranceStarted(positionMs: positionMs)
    }

    func relayUtteranceEnded(_ lastSpeechEndMs: Int) async {
        guard relayingUtterance else { return }
        await dependencies.transcriptSource?.utteranceEnded(lastSpeechEndMs: lastSpeechEndMs)
    }

    /// The final with the words to send and the engine that produced them (nil: the local recogniser).
    func relayedFinal(_ result: UtteranceResult) async -> (UtteranceResult, String?) {
        guard let source = dependencies.transcriptSource, relayingUtterance else { return (result, nil) }
        relayingUtterance = false
        let local = result.hypothesis.text.trimmingCharacters(in: .whitespacesAndNewlines)
        // A final heard while the reply plays starts no turn: no reason to wait for the relay's words.
        let choice = await source.transcript(localText: local, discard: state == .speaking)
        for note in await source.takeNotes() { emit(note) }
        emit(.transcriptSource(engine: choice.engine, relayMs: choice.relayMs, fallbackReason: choice.fallbackReason))
        var chosen = result
        chosen.hypothesis.text = choice.text
        return (chosen, choice.engine)
    }

    /// An utterance the relay was hearing ends without a final (the microphone closed, or the mode no longer lets
    /// sound out): the relay drops it, so what the microphone hears next does not stream on to it.
    func dropRelayedUtterance() async {
        guard relayingUtterance else { return }
        relayingUtterance = false
        _ = await dependencies.transcriptSource?.transcript(localText: "", discard: true)
    }
}
