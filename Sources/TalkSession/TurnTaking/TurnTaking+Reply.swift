import SessionBridge

/// A turn's reply, as the machine follows it: the transcript goes out (`sendTurn`), the agent's text grows the turn,
/// the first sentence playing moves it to speaking, and the reply's end (or its failure) returns the loop to rest
/// with `turnEnded`. The turn's number fences its work: the owner's work for a turn is current only while the
/// machine thinks or speaks that turn (`currentTurn`).
extension TurnTaking {
    /// The turn the machine thinks or speaks now; nil between turns (no turn's work is current).
    package var currentTurn: Int? {
        switch state {
        case .thinking(let turn), .speaking(let turn, _, _): turn.number
        default: nil
        }
    }

    /// Whether turn `number`'s later sentences use the local voice (its Gateway voice failed).
    package func fellBackToLocalVoice(turn number: Int) -> Bool {
        switch state {
        case .thinking(let turn) where turn.number == number, .speaking(let turn, _, _) where turn.number == number: turn.localVoice
        default: false
        }
    }

    /// The user spoke again (or typed): a reply still on its way is dropped, one playing is cut off, the new words go out.
    mutating func startTurn(_ text: String) -> [Action] {
        // A typed turn while the loop speaks for itself: the prompt stops, an approval asked stays pending.
        var actions: [Action] = abandonAsking(all: false)
        if case .speaking(_, _, let intrusion) = state {
            actions += [.cutReply(abort: false), .cancel(.onsetHold)]
            if intrusion?.lowered == true { actions.append(.emit(.replyLevel(gain: 1, reason: "the reply was cut off"))) }
            actions += leaveSpeaking(atNs: nil)
        }
        turns += 1
        let offset = pendingInterruption
        pendingInterruption = nil
        let turn = Turn(number: turns, transcript: text)
        actions += [.sendTurn(number: turn.number, transcript: text, interruptedAtSeconds: offset),
                    .arm(.replyTimeout, configuration.replyTimeout)]
        return actions + move(to: .thinking(turn), reason: "transcript sent")
    }

    /// The agent wrote (an acknowledgement alone does not count: an agent that never writes a word must not hold
    /// the loop): the reply timeout is off, and the reply's text grows.
    mutating func replySentences(_ sentences: [String]) -> [Action] {
        func grown(_ turn: Turn) -> Turn {
            var turn = turn
            for sentence in sentences { turn.reply += (turn.reply.isEmpty ? "" : " ") + sentence }
            return turn
        }
        switch state {
        case .thinking(let turn): state = .thinking(grown(turn))
        case .speaking(let turn, let progress, let intrusion): state = .speaking(grown(turn), progress, intrusion)
        default: return []
        }
        return [.cancel(.replyTimeout)]
    }

    mutating func playbackStarted(_ sentence: String, seconds: Double, atNs: UInt64) -> [Action] {
        switch state {
        case .thinking(let turn):
            var progress = Progress()
            progress.playing = (atNs, seconds)
            progress.played = sentence
            replyEndHeardMs = nil
            var actions: [Action] = [.cancel(.replyTimeout)]
            if !bargeInActive { actions += [.cancel(.muteTail)] + microphoneFollows(muting: true) }
            return actions + move(to: .speaking(turn, progress, nil), reason: "reply")
        case .speaking(let turn, var progress, let intrusion):
            progress.playing = (atNs, seconds)
            progress.played += (progress.played.isEmpty ? "" : " ") + sentence
            state = .speaking(turn, progress, intrusion)
            return []
        default:
            return []
        }
    }

    mutating func playbackStopped(completed: Bool) -> [Action] {
        guard case .speaking(let turn, var progress, let intrusion) = state else { return [] }
        if let playing = progress.playing { progress.spokenSeconds += playing.seconds }
        progress.playing = nil
        state = .speaking(turn, progress, intrusion)
        return []
    }

    mutating func endTurn(atNs: UInt64, heardToMs: Int?) -> [Action] {
        var actions: [Action] = [.cancel(.replyTimeout)]
        switch state {
        case .thinking: break
        case .speaking(let turn, _, _):
            replyEndHeardMs = heardToMs
            replyEndSpoken = turn.reply
            actions += restore(reason: "the reply ended") + [.cancel(.onsetHold)] + leaveSpeaking(atNs: atNs)
        default: return []
        }
        return actions + turnOver(.replyDone, to: restingState)
    }

    /// `Event.gatewayVoiceFailed`: told once per turn; the rest of the turn is spoken in the local voice.
    mutating func gatewayVoiceFailed(turn number: Int, reason: String) -> [Action] {
        switch state {
        case .thinking(var turn) where turn.number == number && !turn.localVoice:
            turn.localVoice = true
            state = .thinking(turn)
        case .speaking(var turn, let progress, let intrusion) where turn.number == number && !turn.localVoice:
            turn.localVoice = true
            state = .speaking(turn, progress, intrusion)
        default:
            return []
        }
        return [.emit(.voiceFallback(reason: reason))]
    }
}
