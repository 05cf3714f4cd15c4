/// The realtime reply's level while the user may be cutting in (no I/O), as the native loop lowers its reply
/// (`TurnTaking`'s intrusion, with the same `BargeInPolicy.Lowering`): sound over the reply lowers it at once, so
/// the user hears they were heard and their first words meet less echo; if the relay hears no utterance start
/// (its speech start, the user's words) within `onsetHold`, it was not them and the level returns. An utterance
/// keeps it lowered while the microphone still hears sound, until the user's final, a barge-in or the reply's end.
struct RealtimeReplyLevel {
    enum Action: Equatable {
        case setGain(Float)
        case emit(TalkEvent.Kind)
        case armHold(Duration)
        case cancelHold
    }

    private let lowering: BargeInPolicy.Lowering
    private(set) var lowered = false
    private var utteranceOpened = false

    init(_ lowering: BargeInPolicy.Lowering) { self.lowering = lowering }

    /// The microphone turned loud over the reply (`SpeechEnergy.onsetFrames` loud frames in a row).
    mutating func soundOnset() -> [Action] {
        let actions = lower(reason: "sound over the reply")
        return actions.isEmpty ? [] : actions + [.armHold(lowering.onsetHold)]
    }

    /// The relay heard the user start speaking, or sent their words, over the reply.
    mutating func utteranceOpens() -> [Action] {
        let actions = lower(reason: "an utterance opened over the reply")
        guard lowered else { return [] }
        let first = !utteranceOpened
        utteranceOpened = true
        // The hold now asks whether the microphone still hears them (the relay may never send a final).
        return first ? actions + [.armHold(lowering.onsetHold)] : actions
    }

    /// The hold ran out: the level returns unless an utterance opened and the microphone still hears sound.
    mutating func holdRanOut(stillHearing: Bool) -> [Action] {
        guard lowered else { return [] }
        if utteranceOpened, stillHearing { return [.armHold(lowering.onsetHold)] }
        return restore(reason: utteranceOpened ? "the utterance closed" : "no utterance followed the sound")
    }

    /// The user's final transcript: their utterance is over.
    mutating func utteranceCloses() -> [Action] { restore(reason: "the utterance closed") }

    /// The reply played to its end.
    mutating func replyEnded() -> [Action] { restore(reason: "the reply ended") }

    /// The reply was stopped (barge-in, overflow, pause, talk stop): stopping the speaker returned its level.
    mutating func replyCut() -> [Action] {
        defer { reset() }
        return lowered ? [.cancelHold, .emit(.replyLevel(gain: 1, reason: "the reply was cut off"))] : [.cancelHold]
    }

    private mutating func lower(reason: String) -> [Action] {
        guard !lowered, let gain = lowering.gain else { return [] }
        lowered = true
        return [.emit(.replyLevel(gain: Double(gain), reason: reason)), .setGain(gain)]
    }

    private mutating func restore(reason: String) -> [Action] {
        guard lowered else { return [] }
        reset()
        return [.cancelHold, .emit(.replyLevel(gain: 1, reason: reason)), .setGain(1)]
    }

    private mutating func reset() {
        lowered = false
        utteranceOpened = false
    }
}
