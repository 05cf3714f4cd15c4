/// The transcript source (the Gateway's transcription relay, `Configuration.relays`): it hears of each utterance's
/// start and end, and the local final is exchanged for its words. Only an utterance that opens while the mode lets
/// sound leave the machine (`mayLeaveMachine`) goes to it; one it was hearing that ends without a final (the
/// microphone closed, or the next opened where sound may not leave) is dropped, so what the microphone hears next
/// does not stream on to it.
///
/// An utterance that opens over the reply (`openedOverReply`) may have opened on the reply's echo: it is relayed
/// held, the source keeping its audio on the machine and sending none, until one of these:
/// - a barge-in on it: released from the user's onset (`userOnsetMs`), so the echo before the user does not reach the
///   relay in front of their words;
/// - its speech is heard going on past the reply's end and its echo's tail (`echoEndMs`, `BargeInPolicy.EchoTail`):
///   released then, from the user's onset, and it streams on while they speak. A partial of it whose audio reaches
///   past that point has the devices asked (`weighSpeechPastEcho`) whether the microphone heard sound loud enough to
///   be speech there, with the microphone open. The partial is the listener's word that the utterance was still open
///   at its end (the listener's events come in stream order, the gate's do not), and the echo's tail is over, so the
///   sound is not the reply's: the echo-turn rule would count the utterance as going on past the reply at its end,
///   and the release only comes sooner. Where the stream had reached is not enough alone: the endpointer keeps an
///   utterance open for its silence window after the echo's last word;
/// - it ends within the reply and its echo's tail (the echo-turn rule), a knock or the echo alone: dropped unsent;
/// - it ends past that with no such partial (the recogniser said nothing new, or the frames were no longer kept):
///   released at its end, where the rule says it may be a turn;
/// - the microphone closes (pause, Talk off): dropped.
/// Whichever way the reply stopped is the same to it: its end or the Gateway ending the run (`Event.replyEnded`), or
/// a cut by push-to-talk or a typed turn (`Action.findReplyStop`, `Event.replyStopped`: where the stream stood once
/// it stopped). A new reply that starts before it is released holds it over that reply in turn (its end forgotten
/// until that reply's).
extension TurnTaking {
    /// What the machine keeps for the transcript source: the utterance it hears, and the sound onsets that may say
    /// where the user began in one held over the reply.
    package struct RelayTrack: Sendable, Equatable {
        /// The utterance the source hears, if any.
        package var utterance: RelayedUtterance?
        /// The latest sound onsets (`Event.soundOnset`, stream ms), in the order heard, at most `keptOnsets`.
        package var onsetsMs: [Int] = []
    }

    package struct RelayedUtterance: Sendable, Equatable {
        /// Its first voiced frame (stream ms).
        package var positionMs: Int
        /// Opened over the reply and not yet released: nothing of it has left the machine.
        package var held: Bool
    }

    /// Sound onsets kept (16): several seconds of speech at a word's pace, more than the source's 6 s of frames.
    static let keptOnsets = 16
    /// Consecutive sound onsets at most this far apart (750 ms, in stream time) are one stretch of speech, and the
    /// user's onset is the first of the stretch that leads to the barge-in's words. The gate makes an onset at each
    /// word of theirs that follows a quiet moment: in 100 replayed barge-ins (PulseAudio and PipeWire, local voice at
    /// 5 and 25 s, Gateway voice) the user's word onsets came 250 to 700 ms apart ("go" to "forward" 250 to 290,
    /// "forward" to "ten" 460 to 480), so the latest onset before a barge-in decided 200 to 1,000 ms in was often
    /// "forward" or "ten", and their first word would be lost. The echo's onsets before the user came within 750 ms
    /// of theirs in 12 of the 100 (within 1 s in 15; live, one echo onset exactly 1 s before "go" put four words of
    /// echo in front of the user's with a 1 s stretch): the release then starts at the echo's onset, never before the
    /// utterance's own start (where it starts without the hold).
    static let onsetStretchGapMs = 750

    /// The utterance the source hears is still theirs: decided as it opened, until its final or its drop.
    package var relaying: Bool { relay.utterance != nil }

    /// `Event.soundOnset`: kept for a release (whatever the state: the user's onset may come just before the
    /// utterance opens over the reply).
    mutating func relayHeard(onsetMs: Int) -> [Action] {
        relay.onsetsMs.append(onsetMs)
        if relay.onsetsMs.count > Self.keptOnsets { relay.onsetsMs.removeFirst(relay.onsetsMs.count - Self.keptOnsets) }
        return []
    }

    /// An utterance opened: it goes to the source if the mode lets it out, held if it opened over the reply
    /// (`speechStarted` has just decided `openedOverReply`); one still relayed is dropped otherwise.
    mutating func relayStarted(_ positionMs: Int) -> [Action] {
        guard configuration.relays else { return [] }
        guard mayLeaveMachine else { return relayDropped() }
        let held = openedOverReply != nil
        relay.utterance = RelayedUtterance(positionMs: positionMs, held: held)
        return [.relay(.started(positionMs: positionMs, held: held))]
    }

    /// After the barge-in decision (`weighed`): a cut on the held utterance releases it from the user's onset.
    mutating func relayAfterWeighing(_ actions: [Action]) -> [Action] {
        guard actions.contains(.cutReply(abort: true)), relay.utterance?.held == true else { return actions }
        relay.utterance?.held = false
        return actions + [.relay(.released(onsetMs: userOnsetMs()))]
    }

    /// The utterance closed (after `speechEnded` judged it). A held one still held goes to the source only if its
    /// speech went on past the reply and its echo's tail (`openedOverReply.endedWithinReply`): released then, from the
    /// user's onset, as its words may be a turn; otherwise it is dropped with nothing sent.
    mutating func relayEnded(_ lastSpeechEndMs: Int) -> [Action] {
        guard let utterance = relay.utterance else { return [] }
        var actions: [Action] = []
        if utterance.held {
            guard let opened = openedOverReply, !opened.endedWithinReply else { return relayDropped() }
            relay.utterance?.held = false
            actions.append(.relay(.released(onsetMs: userOnsetMs())))
        }
        return actions + [.relay(.ended(lastSpeechEndMs: lastSpeechEndMs))]
    }

    /// Where the echo of the reply that last stopped ends in the capture stream (stream ms): where the stream had
    /// reached at its stop, plus `BargeInPolicy.EchoTail.afterReplyMs`; nil while a reply plays, or where it stopped
    /// is not known.
    var echoEndMs: Int? {
        if case .speaking = state { return nil }
        return replyEndHeardMs.map { $0 + configuration.policy.echoTail.afterReplyMs }
    }

    /// The reply was cut off (a typed turn, push-to-talk; not a barge-in, which releases): a held utterance is judged
    /// against where it stopped, which the devices are asked for (`Event.replyStopped`).
    mutating func relayReplyCut(spoken: String) -> [Action] {
        guard relay.utterance?.held == true else { return [] }
        replyEndHeardMs = nil
        replyEndSpoken = spoken
        return [.findReplyStop]
    }

    /// `Event.replyStopped`: the cut reply's stop in the capture stream, as `replyEnded` gives a reply's end.
    mutating func relayReplyStopped(heardToMs: Int) -> [Action] {
        if case .speaking = state { return [] }
        replyEndHeardMs = heardToMs
        return []
    }

    /// A partial of the held utterance whose audio reaches past the echo's end: the utterance is still open there,
    /// so the devices are asked whether the microphone heard speech between the two (`weighSpeechPastEcho`).
    func relayPartial(endMs: Int?) -> [Action] {
        guard relay.utterance?.held == true, microphone == .open, let endMs, let echoEnd = echoEndMs, endMs > echoEnd else { return [] }
        return [.weighSpeechPastEcho(fromMs: echoEnd, throughMs: endMs)]
    }

    /// `Event.speechPastEcho`: the held utterance went on past the reply's echo with sound of its own: released now,
    /// from the user's onset. An answer about an utterance no longer held (released, ended, dropped, or one opened
    /// after that partial's end) changes nothing.
    mutating func relaySpeechPastEcho(throughMs: Int, heard: Bool) -> [Action] {
        guard heard, let utterance = relay.utterance, utterance.held, utterance.positionMs < throughMs, echoEndMs != nil else { return [] }
        relay.utterance?.held = false
        return [.relay(.released(onsetMs: userOnsetMs()))]
    }

    /// `Event.finalArriving`: a relayed utterance's final takes the source's words (`RelayStep.takeFinal`); one still
    /// held (its end never told) is dropped and its local words stand.
    mutating func relayFinal() -> [Action] {
        guard let utterance = relay.utterance else { return [] }
        if utterance.held { return relayDropped() }
        relay.utterance = nil
        return [.relay(.takeFinal)]
    }

    mutating func relayDropped() -> [Action] {
        guard relaying else { return [] }
        relay.utterance = nil
        return [.relay(.dropped)]
    }

    /// Where the user began speaking, for a release: the first onset of the stretch (`onsetStretchGapMs`) that ends
    /// with the latest onset heard; nil when none was heard (the source then sends from the utterance's start). Not
    /// bounded by the barge-in partial's end: a barge-in on a recheck reads the user's sound through the latest frame,
    /// after a partial that may hold only the echo's words. The machine holds no frames, so this is before the
    /// evidence of the echo: the source, which holds them, takes the stretch (`userOnsetStretch`) and skips its echo's
    /// onsets (`userOnsetMs(of:heardAsEcho:)`).
    func userOnsetMs() -> Int? { Self.userOnsetMs(of: relay.onsetsMs) }

    /// The onsets of the stretch that ends with the latest onset heard (empty: none heard), in order.
    package func userOnsetStretch() -> [Int] { Array(Self.onsetStretch(of: relay.onsetsMs)) }

    /// The stretch of `onsets` (stream ms, in the order heard) at most `onsetStretchGapMs` apart that ends with the last.
    package static func onsetStretch(of onsets: [Int]) -> ArraySlice<Int> {
        guard var first = onsets.indices.last else { return [] }
        while first > onsets.startIndex, case let gap = onsets[first] - onsets[first - 1], gap >= 0, gap <= Self.onsetStretchGapMs {
            first -= 1
        }
        return onsets[first...]
    }

    /// The user's onset among the sound onsets `onsets` (stream ms, in the order heard), for a release, the realtime
    /// gate's held onset and a replay's release alike: the first of the stretch that ends with the latest, less the
    /// leading onsets `heardAsEcho` says the reply's echo made (`HeldUtteranceRelease.heardAsEcho`). The stretch
    /// reaches 750 ms back so that the user's first word is kept, and an echo onset in that reach would put the
    /// echo's words in front of theirs; the latest onset is kept whatever is said of it.
    package static func userOnsetMs(of onsets: [Int], heardAsEcho: (Int) -> Bool = { _ in false }) -> Int? {
        let stretch = onsetStretch(of: onsets)
        guard var first = stretch.indices.first else { return nil }
        while first < stretch.indices.last!, heardAsEcho(stretch[first]) { first += 1 }
        return stretch[first]
    }
}
