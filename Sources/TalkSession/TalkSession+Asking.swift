import AudioIO
import Foundation
import SessionBridge
import SpeechSynthesis

/// Where the spoken approval prompt's outcome goes (the daemon's approvals on the operator socket).
package protocol ApprovalAnswers: Sendable {
    /// Sends `decision` for exactly approval `id` (no prefix matching); the Gateway's refusal, if any.
    func resolve(id: String, decision: ApprovalDecision) async -> ApprovalResolveError?
    /// Nothing was decided by voice: the approval stays pending for other clients, with a desktop notification.
    func leavePending(_ approval: PendingApproval) async
}

/// The loop speaking for itself between turns (`TurnTaking+Asking` decides when and what): notices and approvals
/// come in here, prompts are played in the local voice, and the answer's decision goes to `ApprovalAnswers`.
extension TalkSession {
    /// Speaks `text` at the next pause: after the user's utterance and after a reply being spoken, never over
    /// them. False, and nothing is said, while Talk is off or paused.
    package func speakNotice(_ text: String) async -> Bool {
        guard state != .idle, state != .paused else { return false }
        await handle(.noticeArrived(text))
        return true
    }

    /// Asks about `approval` aloud at the next pause and takes the answer by voice; the decision, or the approval
    /// left pending, goes to `answers`. False while Talk is off or paused: the caller leaves the notification.
    package func ask(_ approval: PendingApproval, answers: any ApprovalAnswers) async -> Bool {
        guard state != .idle, state != .paused else { return false }
        approvalAnswers = answers
        await handle(.approvalArrived(approval))
        return true
    }

    /// The approval was decided elsewhere or expired: it is not asked, or, while asked, withdrawn aloud.
    package func approvalGone(id: String) async {
        await handle(.approvalWithdrawn(id: id))
    }

    /// Whether the loop is asking about an approval now (an answer's final goes to the machine as it is).
    var asking: Bool {
        if case .asking = machine.state { true } else { false }
    }

    /// `Action.speakPrompt`: synthesised in the local voice and played after any prompt before it has ended.
    func speakPrompt(number: Int, text: String) {
        let previous = promptTask
        let synthesizer = dependencies.synthesizer
        let playback = dependencies.playback
        let voice = voices.local
        promptTask = Task {
            await previous?.value
            do {
                let chunk = try await synthesizer.synthesizeAll(text, settings: voice)
                try Task.checkCancellation()
                self.emit(.speakingStarted(sentence: text, voice: "local:\(voice.voice)"))
                let outcome = try await playback.play(PCMBuffer(sampleRate: chunk.sampleRate, samples: chunk.samples))
                self.emit(.speakingStopped(sentence: text, completed: outcome == .completed))
            } catch is CancellationError {
            } catch {
                self.emit(.error("could not speak a prompt: \(error)"))
            }
            await self.handle(.promptSpoken(number: number))
        }
    }

    /// `Action.cutPrompt`.
    func cutPrompt() async {
        guard let task = promptTask else { return }
        task.cancel()
        await dependencies.playback.stop()
    }

    /// `Action.listenFor`: the recogniser takes the answers' grammar (push-to-talk mode's hold lets the answer
    /// through meanwhile: the machine's `setMicrophone`).
    func listenFor(grammar: String?) async {
        await listener?.useGrammar(grammar)
    }

    /// `Action.resolveApproval`: exactly the id read out; the machine hears how it went.
    func resolveApproval(id: String, decision: ApprovalDecision) {
        guard let answers = approvalAnswers else {
            Task { await self.handle(.decisionSent(id: id, failure: "The decision could not be sent.")) }
            return
        }
        Task {
            let failure = await answers.resolve(id: id, decision: decision)
            if let failure { self.emit(.error("approval \(id): \(failure)")) }
            await self.handle(.decisionSent(id: id, failure: failure?.spoken))
        }
    }

    /// `Action.leavePending`.
    func leavePending(_ approval: PendingApproval) async {
        await approvalAnswers?.leavePending(approval)
    }
}
