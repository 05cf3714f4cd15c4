import Foundation
import SessionBridge

/// The actor's side of `TurnTaking`: an event goes to the machine, and the actions it returns are carried out in
/// order. A barge-in's slow part (stopping the speaker, asking the agent to abort) runs after the whole list, so
/// the decision is told first, as it was taken.
extension TalkSession {
    /// Returns the actions, for the caller that waits for an answer among them (a control command's refusal, after
    /// which nothing else is done; a push-to-talk command's answer).
    @discardableResult
    func handle(_ event: TurnTaking.Event) async -> [TurnTaking.Action] {
        let actions = machine.handle(event)
        // The gate's standing order follows the machine in the same step: a sound onset lowers the reply at once only
        // while the machine would lower it for one.
        gate.lowerAtSoundOnset(machine.soundOnsetLowering)
        for case .refuse in actions { return actions }
        var afterwards: [AfterAction] = []
        for action in actions { await perform(action, afterwards: &afterwards) }
        // A reply held for the user speaks once they are done.
        if !machine.userSpeaking { releaseFloor() }
        await followPartialCadence()
        for after in afterwards {
            switch after {
            case .stopSpeaker: await dependencies.playback.stop()
            case .abortRun: await abortReply()
            }
        }
        return actions
    }

    private enum AfterAction {
        case stopSpeaker
        case abortRun
    }

    private func perform(_ action: TurnTaking.Action, afterwards: inout [AfterAction]) async {
        switch action {
        case .emit(let kind):
            emit(kind)
        case .announce(let phase):
            announcements?.yield(phase)
        case .sendTurn(let number, let transcript, let offset):
            // The turn before it (still thinking) is dropped; its work finds itself stale.
            cancelTurn()
            releaseFloor()
            startTurn(transcript, interruptedAtSeconds: offset, number: number)
        case .cutReply(abort: false):
            // Talk stops, pauses, or the turn is given up: the cut sentence reports itself stopped before the
            // state that follows is told. Stopping the speaker returns its level.
            await gate.replyPlays(atGain: 1)
            await quiet()
        case .cutReply(abort: true):
            // The user cut in: the decision is told at once; the speaker stops and the run is aborted after.
            cancelTurn()
            dependencies.synthesizer.cancelAll()
            releaseFloor()
            await gate.replyPlays(atGain: 1)
            afterwards += [.stopSpeaker, .abortRun]
        case .weighBargeIn(let partial, let position, let through, let recheck):
            await weighBargeIn(partial, fromPositionMs: position, throughMs: through, recheck: recheck)
        case .weighSoundOverReply:
            await weighSoundOverReply()
        case .findReplyStop:
            await findReplyStop()
        case .weighSpeechPastEcho(let from, let through):
            await weighSpeechPastEcho(fromMs: from, throughMs: through)
        case .held(let partial, let reason):
            logger.debug("barge-in held: \(reason)", metadata: ["talk.partial": "\(partial.prefix(80))"])
        case .note(let message, let metadata):
            logger.notice("\(message)", metadata: metadata.mapValues { "\($0)" })
        case .setReplyGain(let gain):
            await gate.replyPlays(atGain: gain)
            await dependencies.playback.setGain(gain)
        case .setMicrophone(let mode):
            // Set at once, in the actions' order: the frame after this one already meets the new mode.
            gate.setMode(mode)
        case .openMicrophone:
            if let utterances = opened {
                opened = nil
                listenTask = Task { await self.listen(utterances) }
            }
        case .closeMicrophone:
            await closeMicrophone()
        case .arm(let timer, let delay):
            arm(timer, delay)
        case .cancel(let timer):
            timers.cancel(timer)
        case .turnEnded(let reason):
            emit(.turnEnded(reason: reason))
        case .refuse, .answer, .answerWhenCaptureEnds:
            break  // returned to the command that asked
        case .captureEnded(let result):
            captureEnded(result)
        case .relay(let step):
            await relay(step)
        case .speakPrompt(let number, let text):
            speakPrompt(number: number, text: text)
        case .cutPrompt:
            await cutPrompt()
        case .listenFor(let grammar):
            await listenFor(grammar: grammar)
        case .resolveApproval(let id, let decision):
            resolveApproval(id: id, decision: decision)
        case .leavePending(let approval):
            await leavePending(approval)
        }
    }

    /// While a partial may decide a barge-in, the listener reports them at `BargeInPolicy.Partials`' cadence, and at its
    /// own otherwise; while the reply is also lowered for a sound that may be the user, it decodes from an utterance's
    /// first voiced frame (`BargeInPolicy.Partials.decodeFromFirstVoicedFrame`).
    private func followPartialCadence() async {
        let quick = machine.bargeInWaitsOnPartials
        if quick != partialsQuick {
            partialsQuick = quick
            await listener?.reportPartials(everyFrames: quick ? bargeIn.partials.overReplyEveryFrames : nil)
        }
        let ahead = quick && bargeIn.partials.decodeFromFirstVoicedFrame && replyLoweredForIntrusion
        if ahead != decodingAhead {
            decodingAhead = ahead
            // From the sound that lowered the reply: the echo's start window before it is not the user's.
            if ahead { await listener?.decodeAhead(notBeforeMs: machine.relay.onsetsMs.last) }
            await listener?.decodeWhileStarting(ahead)
        }
    }

    /// The reply plays lowered: a sound over it, or an utterance opening, may be the user cutting in.
    private var replyLoweredForIntrusion: Bool {
        if case .speaking(_, _, let intrusion?) = machine.state { return intrusion.lowered }
        return false
    }

    /// How far the words being weighed end behind the microphone's newest frame (`BargeInEvidence.behindMs`): where
    /// the recogniser has heard through now (its words are its latest through there), else the partial's own end
    /// (`partialEndMs`; a recheck's is the latest partial's); nil when neither is known.
    private func wordsBehindMs(partialEndMs: Int?) async -> Int? {
        let head = await gate.heardToMs
        guard let words = listener?.heardThroughMs ?? partialEndMs ?? machine.latestPartialEndMs else { return nil }
        return max(0, head - words)
    }

    /// Asks the devices how much of the utterance, through the partial's own audio, the reply's echo explains and
    /// whether that audio was speech over the noise floor, and hands the answer back to the machine, which decides.
    private func weighBargeIn(_ partial: String, fromPositionMs position: Int, throughMs: Int?, recheck: Bool) async {
        let startNs = machine.userSpeechStartNs ?? dependencies.clock.nowNs()
        let speechMs = Int((dependencies.clock.nowNs() &- startNs) / 1_000_000)
        let heard = await gate.bargeInEvidence(fromPositionMs: position, throughMs: throughMs, recheck: recheck)
        let evidence = BargeInEvidence(
            echoExplained: heard.echoExplained, speechMs: speechMs, startedBeforeReplyAudio: heard.startedBeforeReplyAudio,
            userSoundShown: heard.userSoundShown, behindMs: await wordsBehindMs(partialEndMs: throughMs))
        let loud = await gate.heardSpeech(endingAtMs: throughMs)
        let actions = await handle(.bargeInEvidence(partial: partial, evidence, loudEnough: loud, atNs: dependencies.clock.nowNs()))
        if actions.contains(.cutReply(abort: true)) { await decodeAgainFromUserOnset() }
    }
}
