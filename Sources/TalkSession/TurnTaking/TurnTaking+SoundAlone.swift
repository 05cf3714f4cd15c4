/// Barge-in on the user's sound before their words (`BargeInPolicy.Evidence.stopsOnUserSoundBeforeWords`): while an
/// utterance is open over the reply and no partial of it may be weighed, its frames are weighed on their own, as it
/// opens and again at the rechecks' pace. Only a measured, lasting run of the user's own sound, loud enough, cuts in;
/// anything less waits quietly (no `held` for each look: over the echo there are thousands).
extension TurnTaking {
    /// The reply plays, barge-in is on, the user is speaking, the mode lets sound cut in (wake-phrase mode needs the
    /// phrase's words), and the rule is on.
    var maySoundAloneBargeIn: Bool {
        guard configuration.policy.evidence.stopsOnUserSoundBeforeWords, case .speaking = state, bargeInActive,
              userSpeechStartNs != nil
        else { return false }
        return handsFreeAllowsBargeIn("")
    }

    /// Weighs the utterance's sound through the latest frame now.
    func weighSoundAlone() -> [Action] {
        guard maySoundAloneBargeIn else { return [] }
        return [.weighBargeIn(partial: "", fromPositionMs: userSpeechPositionMs, throughMs: nil, recheck: true)]
    }

    /// Weighs it again after `recheckInterval`.
    func soundAloneRecheck() -> [Action] {
        guard maySoundAloneBargeIn else { return [] }
        return [.arm(.evidenceRecheck, recheckInterval)]
    }

    /// The answer to `weighSoundAlone`: cuts in on a shown, lasting sound of the user's that the policy does not hold
    /// and that is loud enough; otherwise looks again shortly while it can tell (a measure is needed: without a
    /// canceller there is nothing to tell the user's sound from the echo by).
    mutating func weighedSoundAlone(_ evidence: BargeInEvidence, loudEnough: Bool, atNs: UInt64) -> [Action] {
        // The state may have moved, or a partial become the one to weigh, while the devices were asked.
        guard maySoundAloneBargeIn, !mayBargeIn(latestPartial) else { return [] }
        if evidence.userSoundShown == true, configuration.policy.evidence.holdReason(evidence) == nil, loudEnough {
            return bargeIn(partial: "", atNs: atNs)
        }
        return evidence.userSoundShown == nil ? [] : soundAloneRecheck()
    }
}
