import AudioIO
import Foundation
import SessionBridge

/// The relay's answer in audio: queued as it comes, played through the speaker in order, the marks behind each piece
/// acknowledged once it has been heard, and over when `RealtimeAnswerEnd` says so (the relay said its audio is done,
/// or it was cut), not when the queue runs dry: an underrun is said (`underranNote`, then `resumedNote` with its
/// length) and the answer plays on. No mark ends the answer: a relay that acknowledges them itself sends none.
extension RealtimeTalkSession {
    static let underranNote = "output underran: waiting for the rest of the answer"

    static func resumedNote(afterNs ns: UInt64) -> String { "output resumed after \(ns / 1_000_000) ms" }

    static let noAudioDoneNote = "the relay's audio stopped without its audioDone: the answer is taken as over after "
        + "\(RealtimeAnswerEnd.noAudioDoneWait.components.seconds) s"

    /// The relay's audio of `turnId` (the provider's `item`): queued to play, unless its turn or item was cut.
    func queueAudio(_ bytes: [UInt8], item: String?, turnId: String?) async {
        if output.isDropped(turnId) || (item != nil && item == clearedItem) { return }
        guard state == .listening || state == .speaking else { return }   // paused or Talk off: nothing plays
        let samples = stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
        switch output.appendAudio(samples, turnId: turnId) {
        case .queued:
            outputTurn = turnId ?? outputTurn
            outputItem = item
            answerEnd.audioQueued(itemId: item, turnId: turnId)
            wakePlayer()
        case .overflow:
            // The turn is cut as a barge-in cuts it: the rest of its audio, still arriving, is dropped here (not
            // only by a relay client that drops audio of cancelled turns), so it is not queued and cut again.
            emit(.error("the relay's audio came faster than it plays; the output is cut"))
            if let turnId { output.dropTurn(turnId) }
            flush()
            answerEnd.cut()
            await playback.stop()
            try? await relay.cancelOutput(turnId: turnId, reason: "playback-overflow")
        case .refused(let why):
            emit(.error("the relay's audio was refused: \(why)"))
        }
    }

    /// The relay's `audioDone`: once what is queued has played, the answer is over.
    func relayAudioDone(item: String?, turnId: String?) {
        if answerEnd.audioDone(itemId: item, turnId: turnId) { wakePlayer() }
    }

    func play() async {
        while !Task.isCancelled {
            guard let item = output.next() else {
                if outputStartNs != nil { await outputRanDry() }
                await withCheckedContinuation { playerWaiter = $0 }
                continue
            }
            switch item {
            case .mark(let name):
                acknowledge([name])
            case .audio(let buffer, let turn, let marks):
                // (What else of the same turn was queued comes in the same buffer, and plays without gaps.)
                if outputStartNs == nil {
                    outputStartNs = clock.nowNs()
                    setState(.speaking, reason: "relay audio")
                    emit(.speakingStarted(sentence: assistantText, voice: "gateway-realtime"))
                } else if let dryNs = answerEnd.resumed(atNs: clock.nowNs()) {
                    cancelAnswerWait()
                    emit(.relayNote(Self.resumedNote(afterNs: dryNs)))
                }
                if !output.isDropped(turn) { _ = try? await playback.play(buffer) }
                // Heard, or cut (a cut answer's marks are the provider's to forget: it truncated the answer).
                acknowledge(marks)
            }
        }
    }

    /// Acknowledges marks whose audio is over, in order, without holding the next audio back for the Gateway's answer.
    private func acknowledge(_ names: [String]) {
        guard !names.isEmpty else { return }
        let previous = markAcknowledgements
        markAcknowledgements = Task {
            await previous?.value
            var acknowledged = 0
            for name in names where !Task.isCancelled {
                do {
                    try await relay.acknowledgeMark(name)
                    acknowledged += 1
                } catch {
                    emit(.error("acknowledging mark \(name) failed: \(error)"))
                }
            }
            guard acknowledged > 0, let last = names.last else { return }
            emit(.relayNote(Self.marksAcknowledgedNote(acknowledged, last: last)))
        }
    }

    /// One note for the marks behind one piece of audio (a relay sends one behind each delta).
    static func marksAcknowledgedNote(_ count: Int, last: String) -> String {
        count == 1 ? "mark \(last) acknowledged" : "\(count) marks acknowledged, the last \(last)"
    }

    /// The queue ran dry while the answer plays: its end, or an underrun to wait out.
    private func outputRanDry() async {
        switch answerEnd.ranDry(atNs: clock.nowNs()) {
        case .ended:
            await stopSpeaking(completed: true, ending: .replyDone)
        case .endedWithoutAudioDone:
            emit(.relayNote(Self.noAudioDoneNote))
            await stopSpeaking(completed: true, ending: .replyDone)
        case .underrun:
            emit(.relayNote(Self.underranNote))
            answerWaitGeneration += 1
            let generation = answerWaitGeneration
            let clock = clock
            answerWait = Task { [weak self] in
                do { try await clock.sleep(RealtimeAnswerEnd.noAudioDoneWait) } catch { return }
                await self?.answerWaitRanOut(generation: generation)
            }
        case .waiting:
            break
        }
    }

    private func answerWaitRanOut(generation: Int) {
        guard generation == answerWaitGeneration, answerEnd.noAudioDoneWaitRanOut() else { return }
        answerWait = nil
        wakePlayer()
    }

    func cancelAnswerWait() {
        answerWaitGeneration += 1
        answerWait?.cancel()
        answerWait = nil
    }

    func flush() { output.flushAudio() }

    /// The answer stops playing and, `ending` its turn (done or cut by barge-in), the session listens again. With
    /// `ending` nil (`pause`, `talk stop`: they set their own state) no turn ends.
    func stopSpeaking(completed: Bool, ending reason: TurnEndReason?) async {
        guard outputStartNs != nil else { return }
        outputStartNs = nil
        outputEndNs = clock.nowNs()
        answerEnd.answerStopped()
        cancelAnswerWait()
        uplinkGate.answerStopped()
        await perform(completed ? replyLevel.replyEnded() : replyLevel.replyCut())
        emit(.speakingStopped(sentence: assistantText, completed: completed))
        guard let reason else { return }
        setState(.listening, reason: reason.rawValue)
        emit(.turnEnded(reason: reason))
    }

    func wakePlayer() {
        let waiter = playerWaiter
        playerWaiter = nil
        waiter?.resume()
    }
}
