import SessionBridge

/// What the relay says of the utterance being streamed (`RelayTranscription`): the turns it opened in it, which of
/// them heard speech, their finals, and its failures; a final of a turn not seen in the current utterance is late
/// and dropped.
extension RelayTranscription {
    func relayEvent(_ event: TalkRelayEvent) {
        switch event.kind {
        case .speechStart, .inputAudio, .partial:
            guard let turn = event.turnId, var current = utterance, current.failure == nil else { return }
            if !current.turnIds.contains(turn) { current.turnIds.append(turn) }
            if case .partial = event.kind { current.spokenTurns.insert(turn) }
            utterance = current
        case .transcript(_, let text, true):
            let words = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if words.isEmpty {
                emptyFinals += 1   // turn ended / committed markers carry no words
                if event.talkEventType == "turn.ended", let turn = event.turnId, var current = utterance, current.turnIds.contains(turn) {
                    current.endedTurns.insert(turn)
                    utterance = current
                    signal()
                }
                return
            }
            guard var current = utterance else { return late(words) }
            if let turn = event.turnId {
                guard current.turnIds.contains(turn) else { return late(words) }
                current.finals[turn] = words
            } else {
                current.unkeyedFinals.append(words)
            }
            current.finalNs = clock.nowNs()
            utterance = current
            signal()
        case .error(let message):
            if let index = utterance?.index { fail(index, "the relay failed: \(String(message.prefix(200)))") }
        case .closed(let reason):
            if let index = utterance?.index, utterance?.finals.isEmpty ?? true { fail(index, "the relay session closed (\(reason))") }
        default:
            break
        }
    }

    private func late(_ words: String) {
        lateFinals += 1
        logger.notice("a late relay final was dropped", metadata: ["relay.words": "\(words.split(separator: " ").count)"])
    }


    /// The relay's words once every turn in which it heard speech has its final.
    static func words(of u: Utterance) -> String? {
        if !u.turnIds.isEmpty {
            guard !u.finals.isEmpty, u.spokenTurns.allSatisfy({ u.finals[$0] != nil }) else { return nil }
            return u.turnIds.compactMap { u.finals[$0] }.joined(separator: " ")
        }
        return u.unkeyedFinals.isEmpty ? nil : u.unkeyedFinals.joined(separator: " ")
    }
}
