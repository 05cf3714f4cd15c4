import SpeechRecognition

/// The loop's side of a `TranscriptSource` (the Gateway's transcription relay): it hears of each utterance's
/// start and end, and at the local final it takes the source's words instead of the local ones.
extension TalkSession {
    func relayUtteranceStarted(_ positionMs: Int) async {
        await dependencies.transcriptSource?.utteranceStarted(positionMs: positionMs)
    }

    func relayUtteranceEnded(_ lastSpeechEndMs: Int) async {
        await dependencies.transcriptSource?.utteranceEnded(lastSpeechEndMs: lastSpeechEndMs)
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
