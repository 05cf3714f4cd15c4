/// The reply's level while the user may be cutting in (`RealtimeReplyLevel` decides, this carries it out): the
/// speaker's gain (and the uplink gate told of it: `RealtimeUplinkGate`), the `replyLevel` events the native loop
/// emits, and the onset hold on the session's clock.
extension RealtimeTalkSession {
    /// The relay heard the user start (its speech start, their words so far): over the reply, an utterance opened.
    func userSpeaks() async {
        guard outputStartNs != nil, !settings.halfDuplex else { return }
        await perform(replyLevel.utteranceOpens())
    }

    func perform(_ actions: [RealtimeReplyLevel.Action]) async {
        for action in actions {
            switch action {
            case .setGain(let gain):
                if gain < 1 { uplinkGate.answerLowered() } else { uplinkGate.answerLevelReturned() }
                await playback.setGain(gain)
            case .emit(let kind):
                emit(kind)
            case .armHold(let delay):
                timers.arm(.onsetHold, after: delay, clock: clock) { [weak self] id in await self?.holdRanOut(id: id) }
            case .cancelHold:
                timers.cancel(.onsetHold)
            }
        }
    }

    private func holdRanOut(id: Int) async {
        guard timers.take(.onsetHold, id: id) else { return }
        await perform(replyLevel.holdRanOut(stillHearing: bargeInGuard.hearsSound))
    }
}
