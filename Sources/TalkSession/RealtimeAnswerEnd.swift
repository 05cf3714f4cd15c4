/// When the realtime answer playing is over (no I/O). The relay's audio comes in chunks as its provider streams
/// them (the reference Gateway: 100 ms chunks at twice real time), so the output queue running dry is no end of
/// the answer: a loaded machine or a slow network leaves gaps longer than what is queued. The answer is over once the
/// relay has said its audio is done (`audioDone` of the item queued last, or naming none: upstream's `response.done`)
/// and what was queued has played, or once it is cut (a clear, a barge-in, push-to-talk, an overflow). An empty queue
/// before that is an underrun: the answer still plays for all that asks (the state, the reply's level, the uplink
/// gate, half duplex's muted microphone) until the rest comes. A relay that never says so (an older Gateway: the
/// protocol-3 era's relay sent no `audioDone`, fact sheet §9.8; a broken one) has the answer end once the output has
/// been dry for `noAudioDoneWait`.
///
/// A mark is no end of the answer: a relay whose provider bridge forwards marks puts one behind every audio delta
/// (upstream's OpenAI bridge), so a mark says the audio before it has played, not that no more comes.
struct RealtimeAnswerEnd {
    /// How long the output may stay dry, the relay not having said its audio is done, before the answer is taken as
    /// over (2 s). Longer than a stall of a live stream that still carries on: the provider sends faster than real
    /// time, and a loaded machine held the reference Gateway's next 100 ms chunk back over 100 ms. It is what a
    /// Gateway that never sends `audioDone` costs after each answer: the session stays speaking this long (without
    /// echo cancellation the microphone stays muted this long, and `BargeInPolicy.muteTail` after).
    static let noAudioDoneWait: Duration = .seconds(2)

    enum Dry: Equatable {
        /// The relay said the answer's audio is done, or it was cut: the answer is over.
        case ended
        /// The wait for the relay's word ran out: the answer is taken as over.
        case endedWithoutAudioDone
        /// The output underran: say so and wait (`noAudioDoneWait`) for the rest.
        case underrun
        /// An underrun already under way: keep waiting.
        case waiting
    }

    /// The provider's item and the turn of the audio queued last (nil: not named).
    private var item: String?
    private var turn: String?
    /// The relay said the audio queued so far is all of its answer, or the answer was cut.
    private(set) var relayDone = false
    /// When the output ran dry (session clock), during an underrun.
    private(set) var dryFromNs: UInt64?
    private var waitRanOut = false

    /// Audio of the answer was queued: more may follow until the relay says it is done.
    mutating func audioQueued(itemId: String?, turnId: String?) {
        relayDone = false
        item = itemId
        turn = turnId
    }

    /// The relay's `audioDone`; whether it is for the audio queued last (the same item and turn, where both name one).
    mutating func audioDone(itemId: String?, turnId: String?) -> Bool {
        if let itemId, let item, itemId != item { return false }
        if let turnId, let turn, turnId != turn { return false }
        relayDone = true
        return true
    }

    /// The answer was cut (an overflow): nothing more of it plays.
    mutating func cut() { relayDone = true }

    /// The output queue ran dry while the answer plays, at `now` (session clock).
    mutating func ranDry(atNs now: UInt64) -> Dry {
        if relayDone { return .ended }
        if waitRanOut { return .endedWithoutAudioDone }
        guard dryFromNs == nil else { return .waiting }
        dryFromNs = now
        return .underrun
    }

    /// The output plays again: how long (ns) it was dry, if it underran.
    mutating func resumed(atNs now: UInt64) -> UInt64? {
        defer {
            dryFromNs = nil
            waitRanOut = false
        }
        return dryFromNs.map { now &- $0 }
    }

    /// `noAudioDoneWait` passed since the underrun began: whether the answer is now taken as over (still dry).
    mutating func noAudioDoneWaitRanOut() -> Bool {
        guard dryFromNs != nil, !relayDone else { return false }
        waitRanOut = true
        return true
    }

    /// The answer stopped playing (its end, a cut, a pause): the next one starts afresh.
    mutating func answerStopped() {
        relayDone = false
        dryFromNs = nil
        waitRanOut = false
    }
}
