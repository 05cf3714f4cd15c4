/// The transcript source (the Gateway's transcription relay, `Configuration.relays`): it hears of each utterance's
/// start and end, and the local final is exchanged for its words. Only an utterance that opens while the mode lets
/// sound leave the machine (`mayLeaveMachine`) goes to it; one it was hearing that ends without a final (the
/// microphone closed, or the next opened where sound may not leave) is dropped, so what the microphone hears next
/// does not stream on to it.
extension TurnTaking {
    /// An utterance opened: it goes to the source if the mode lets it out; one still relayed is dropped otherwise.
    mutating func relayStarted(_ positionMs: Int) -> [Action] {
        guard configuration.relays else { return [] }
        guard mayLeaveMachine else { return relayDropped() }
        relaying = true
        return [.relay(.started(positionMs: positionMs))]
    }

    mutating func relayEnded(_ lastSpeechEndMs: Int) -> [Action] {
        relaying ? [.relay(.ended(lastSpeechEndMs: lastSpeechEndMs))] : []
    }

    /// `Event.finalArriving`: a relayed utterance's final takes the source's words (`RelayStep.takeFinal`).
    mutating func relayFinal() -> [Action] {
        guard relaying else { return [] }
        relaying = false
        return [.relay(.takeFinal)]
    }

    mutating func relayDropped() -> [Action] {
        guard relaying else { return [] }
        relaying = false
        return [.relay(.dropped)]
    }
}
