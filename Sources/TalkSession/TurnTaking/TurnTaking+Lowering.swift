/// Sound over the reply, before any utterance opens (`TurnTaking`'s intrusion): the reply is lowered at once, 200 to
/// 500 ms before the endpointer can tell speech from a knock, and held lowered for `BargeInPolicy.Lowering.onsetHold`;
/// while the microphone still hears the user's own sound the hold goes on (to `onsetHoldLimit`); with no utterance
/// by then the level returns.
extension TurnTaking {
    /// The gain a sound over the reply would lower it to now, nil when it would not lower it: the loop's standing order
    /// to the microphone gate, which lowers the reply at the onset's frame itself and tells the machine after.
    package var soundOnsetLowering: Float? {
        guard case .speaking(_, _, nil) = state, userSpeechStartNs == nil, bargeInActive else { return nil }
        return configuration.policy.lowering.gain
    }

    /// `loweredAtOnce`: the gain the gate already lowered the reply to at the onset (no `setReplyGain` for it again); if
    /// the machine has moved on since it gave the order and has not lowered the reply itself, the level returns.
    mutating func soundOnset(loweredAtOnce: Float? = nil) -> [Action] {
        guard case .speaking(let turn, let progress, nil) = state, userSpeechStartNs == nil, bargeInActive else {
            var lowered = false
            if case .speaking(_, _, let intrusion?) = state { lowered = intrusion.lowered }
            return loweredAtOnce == nil || lowered ? [] : [.setReplyGain(1)]
        }
        var intrusion = Intrusion(speechStartNs: nil, lowered: false)
        var actions = lower(&intrusion, reason: "sound over the reply")
        guard intrusion.lowered else { return [] }
        if let loweredAtOnce { actions.removeAll { $0 == .setReplyGain(loweredAtOnce) } }
        intrusion.held = configuration.policy.lowering.onsetHold
        state = .speaking(turn, progress, intrusion)
        return actions + [.arm(.onsetHold, intrusion.held)]
    }

    /// The onset hold ran out with no utterance open. The recogniser's speech start may come more than a second after
    /// the user's onset (the echo and the lowering confuse the endpointer): while the microphone still hears their own
    /// sound, the reply stays lowered, up to `BargeInPolicy.Lowering.onsetHoldLimit` in all; then, or once the sound
    /// stops or the echo explains it, the level returns.
    mutating func onsetHoldRanOut() -> [Action] {
        guard userSpeechStartNs == nil, case .speaking(_, _, let intrusion?) = state else { return [] }
        let lowering = configuration.policy.lowering
        guard intrusion.lowered, intrusion.speechStartNs == nil, intrusion.held < lowering.onsetHoldLimit else {
            return restore(reason: Self.noUtterance(within: intrusion.held, lowering))
        }
        return [.weighSoundOverReply]
    }

    /// What the microphone hears when the onset hold ran out (`onsetHoldRanOut`).
    mutating func soundOverReply(userSound: Bool) -> [Action] {
        // The state may have moved while the devices were asked.
        guard userSpeechStartNs == nil, case .speaking(let turn, let progress, var intrusion?) = state, intrusion.lowered,
              intrusion.speechStartNs == nil
        else { return [] }
        let lowering = configuration.policy.lowering
        let more = min(lowering.onsetHold, lowering.onsetHoldLimit - intrusion.held)
        guard userSound, more > .zero else { return restore(reason: Self.noUtterance(within: intrusion.held, lowering)) }
        intrusion.held += more
        state = .speaking(turn, progress, intrusion)
        return [.arm(.onsetHold, more)]
    }

    /// Why the level returns with no utterance: the hold ran once, or went on this long while the user's sound did.
    static func noUtterance(within held: Duration, _ lowering: BargeInPolicy.Lowering) -> String {
        guard held > lowering.onsetHold else { return "no utterance followed the sound" }
        return "no utterance followed the sound within \(Int((held / .milliseconds(1)).rounded())) ms"
    }
}
