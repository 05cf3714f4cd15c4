import SessionBridge

/// The loop speaking for itself between turns: a notice (the Gateway's `system.notify`), or an approval's question
/// with its answer taken by voice. Both wait for a pause: never over the user's utterance, never over a reply (a
/// reply being spoken finishes first). Each prompt plays with the microphone muted, and the answer is listened for
/// only after the mute tail (`BargeInPolicy.muteTail`), so the question's own echo never answers it; an utterance
/// that began before is not an answer either. A decision goes out only for the approval read out, by its id.
extension TurnTaking {
    /// What waits for the next pause.
    package enum Waiting: Sendable, Equatable {
        case approval(PendingApproval)
        case notice(String)
    }

    /// An approval being asked about.
    package struct Asking: Sendable, Equatable {
        package var approval: PendingApproval
        package var step: AskingStep
        /// Answers not understood (or heard with too little confidence): the second leaves the approval pending.
        package var misses = 0
        /// "Allow always" was heard: the answer wanted now is yes or no.
        package var confirmingAlways = false
        /// The utterance being spoken began before the microphone opened for the answer: the question's echo.
        package var beganEarly = false
    }

    package enum AskingStep: Sendable, Equatable {
        /// Prompt `number` plays (the question, the second confirmation, "sorry"): nothing heard is an answer.
        case question(prompt: Int)
        /// It played: the microphone opens after the mute tail.
        case tail
        /// Listening for the answer (at most `ApprovalPrompt.answerWindow` for it to begin).
        case answer
        /// The decision goes out.
        case sending(ApprovalDecision)
        /// The last words play (the confirmation, "handled elsewhere", "left pending"); then the loop rests again.
        case closing(prompt: Int)

        var talkState: TalkState {
            switch self {
            // The tail is the question's echo dying away: the microphone is still muted.
            case .question, .tail, .closing: .speaking
            case .answer: .listening
            case .sending: .thinking
            }
        }
    }

    // MARK: - Arrivals

    mutating func noticeArrived(_ text: String) -> [Action] {
        guard state != .idle, state != .paused else { return [] }
        waiting.append(.notice(text))
        return []
    }

    mutating func approvalArrived(_ approval: PendingApproval) -> [Action] {
        // With Talk off or paused nobody is asked (the caller leaves the notification).
        guard state != .idle, state != .paused else { return [] }
        if case .asking(let asking) = state, asking.approval.id == approval.id { return [] }
        guard !waiting.contains(.approval(approval)) else { return [] }
        // Approvals before notices, each in the order it came.
        let at = waiting.firstIndex { if case .notice = $0 { true } else { false } } ?? waiting.endIndex
        waiting.insert(.approval(approval), at: at)
        return []
    }

    mutating func approvalWithdrawn(_ id: String) -> [Action] {
        waiting.removeAll { if case .approval(let a) = $0 { a.id == id } else { false } }
        guard case .asking(var asking) = state, asking.approval.id == id else { return [] }
        switch asking.step {
        case .sending, .closing:
            return []  // our own decision going out, or the prompt already ending
        case .question, .tail, .answer:
            let actions: [Action] = [.cutPrompt, .cancel(.answerTimeout), .listenFor(grammar: nil),
                                     .emit(.approvalPrompt(id: id, step: "withdrawn", detail: "handled elsewhere"))]
            return actions + close(&asking, saying: ApprovalPrompt.withdrawn)
        }
    }

    /// At a pause (listening or resting, the user silent), the first thing waiting begins.
    mutating func atPause() -> [Action] {
        guard state == .listening || state == .resting, userSpeechStartNs == nil, !waiting.isEmpty else { return [] }
        switch waiting.removeFirst() {
        case .notice(let text):
            let number = nextPrompt()
            let moved = move(to: .announcing(prompt: number), reason: "notice")
            return [.cancel(.muteTail)] + microphoneFollows(muting: true) + [.speakPrompt(number: number, text: text)] + moved
        case .approval(let approval):
            var asking = Asking(approval: approval, step: .tail)
            let question = ApprovalPrompt.question(for: approval)
            return [.emit(.approvalPrompt(id: approval.id, step: "asked", detail: question))]
                + speak(&asking, question, reason: "approval")
        }
    }

    // MARK: - Prompts

    private mutating func nextPrompt() -> Int {
        prompts += 1
        return prompts
    }

    /// Speaks `text` as the asking's next question, the microphone muted.
    private mutating func speak(_ asking: inout Asking, _ text: String, reason: String) -> [Action] {
        let number = nextPrompt()
        asking.step = .question(prompt: number)
        let moved = move(to: .asking(asking), reason: reason)
        return [.cancel(.answerTimeout), .cancel(.muteTail)] + microphoneFollows(muting: true) + [.speakPrompt(number: number, text: text)] + moved
    }

    /// Speaks the last words; then the loop rests again.
    private mutating func close(_ asking: inout Asking, saying text: String) -> [Action] {
        let number = nextPrompt()
        asking.step = .closing(prompt: number)
        let moved = move(to: .asking(asking), reason: "approval")
        return [.cancel(.muteTail)] + microphoneFollows(muting: true) + [.speakPrompt(number: number, text: text)] + moved
    }

    mutating func promptSpoken(_ number: Int) -> [Action] {
        switch state {
        case .announcing(let prompt) where prompt == number:
            return [.arm(.muteTail, configuration.policy.muteTail)] + move(to: restingState, reason: "notice spoken")
        case .asking(var asking):
            switch asking.step {
            case .question(let prompt) where prompt == number:
                // The microphone opens for the answer once the question's echo has died away.
                asking.step = .tail
                state = .asking(asking)
                return [.arm(.muteTail, configuration.policy.muteTail)]
            case .closing(let prompt) where prompt == number:
                return [.arm(.muteTail, configuration.policy.muteTail)] + move(to: restingState, reason: "approval done")
            default:
                return []
            }
        default:
            return []
        }
    }

    /// `Timer.muteTail` while asking: the microphone opens for the answer, in the grammar of the decisions offered.
    mutating func answerOpens() -> [Action] {
        guard case .asking(var asking) = state else { return [] }
        guard asking.step == .tail else { return microphoneFollows(muting: false) }
        asking.step = .answer
        asking.beganEarly = userSpeechStartNs != nil
        // Push-to-talk mode's hold lets the answer through while it is listened for.
        let moved = move(to: .asking(asking), reason: "answer")
        // Told as it opens: a test (or a client) plays or says the answer from here on, not after a guessed delay.
        return [.listenFor(grammar: ApprovalPrompt.grammar(allowed: asking.approval.allowedDecisions))] + microphoneFollows(muting: false)
            + [.arm(.answerTimeout, ApprovalPrompt.answerWindow), .emit(.approvalPrompt(id: asking.approval.id, step: "listening", detail: nil))]
            + moved
    }

    /// An utterance opened while asking: while listening for the answer it stops the timeout; before, it is the
    /// question's echo (or speech over it) and its final is not an answer.
    mutating func answerBegan() -> [Action] {
        guard case .asking(var asking) = state else { return [] }
        let listening = asking.step == .answer
        asking.beganEarly = !listening
        state = .asking(asking)
        return listening ? [.cancel(.answerTimeout)] : []
    }

    // MARK: - The answer

    mutating func answerHeard(_ text: String, confidence: Double?) -> [Action] {
        userSpeechStartNs = nil
        guard case .asking(var asking) = state else { return [] }
        guard asking.step == .answer, !asking.beganEarly else {
            asking.beganEarly = false
            state = .asking(asking)
            return [.emit(.transcriptIgnored(text: text, reason: "heard while the approval's question played"))]
        }
        let id = asking.approval.id
        let allowed = asking.approval.allowedDecisions
        if let confidence, confidence < ApprovalPrompt.minimumConfidence {
            return miss(&asking, heard: text, why: "confidence \(confidence) under \(ApprovalPrompt.minimumConfidence)")
        }
        switch ApprovalPrompt.interpret(text, allowed: allowed) {
        case .decision(.allowAlways) where !asking.confirmingAlways:
            asking.confirmingAlways = true
            return [.emit(.approvalPrompt(id: id, step: "confirm allow-always", detail: nil))]
                + speak(&asking, ApprovalPrompt.confirmAlways, reason: "approval")
        case .yes where asking.confirmingAlways, .decision(.allowAlways):
            return send(&asking, .allowAlways)
        case .decision(let decision):
            return send(&asking, decision)
        case .no where asking.confirmingAlways:
            asking.confirmingAlways = false
            return [.emit(.approvalPrompt(id: id, step: "repeated", detail: "not always"))]
                + speak(&asking, ApprovalPrompt.question(for: asking.approval), reason: "approval")
        case .repeatQuestion:
            let again = asking.confirmingAlways ? ApprovalPrompt.confirmAlways : ApprovalPrompt.question(for: asking.approval)
            return [.emit(.approvalPrompt(id: id, step: "repeated", detail: nil))] + speak(&asking, again, reason: "approval")
        case .cancel:
            return leavePending(&asking, why: "cancelled")
        case .unavailable(let decision):
            return miss(&asking, heard: text, why: "\(decision.rawValue) is not offered",
                        saying: "That is not offered here. " + ApprovalPrompt.choices(allowed))
        case .yes, .no, nil:
            return miss(&asking, heard: text, why: "not an answer")
        }
    }

    /// Not understood: asked once more, and the second time left pending.
    private mutating func miss(_ asking: inout Asking, heard: String, why: String, saying: String? = nil) -> [Action] {
        asking.misses += 1
        let event: Action = .emit(.approvalPrompt(id: asking.approval.id, step: "not understood", detail: "\(heard): \(why)"))
        guard asking.misses < ApprovalPrompt.maximumMisses else {
            return [event] + leavePending(&asking, why: "not understood twice")
        }
        let again = asking.confirmingAlways ? ApprovalPrompt.confirmAlways : ApprovalPrompt.choices(asking.approval.allowedDecisions)
        return [event] + speak(&asking, saying ?? ApprovalPrompt.notUnderstood + " " + again, reason: "approval")
    }

    private mutating func send(_ asking: inout Asking, _ decision: ApprovalDecision) -> [Action] {
        asking.step = .sending(decision)
        let moved = move(to: .asking(asking), reason: "decided")
        return [.cancel(.answerTimeout), .listenFor(grammar: nil)] + microphoneFollows()
            + [.resolveApproval(id: asking.approval.id, decision: decision)] + moved
    }

    mutating func decisionSent(_ id: String, failure: String?) -> [Action] {
        guard case .asking(var asking) = state, asking.approval.id == id, case .sending(let decision) = asking.step else { return [] }
        let event: Action = .emit(.approvalPrompt(id: id, step: failure == nil ? decision.rawValue : "failed", detail: failure))
        return [event] + close(&asking, saying: failure ?? ApprovalPrompt.confirmation(decision))
    }

    /// `Timer.answerTimeout`: nothing began in time; nothing is decided.
    mutating func noAnswer() -> [Action] {
        guard case .asking(var asking) = state, asking.step == .answer, userSpeechStartNs == nil else { return [] }
        return leavePending(&asking, why: "no answer")
    }

    private mutating func leavePending(_ asking: inout Asking, why: String) -> [Action] {
        [.cancel(.answerTimeout), .listenFor(grammar: nil), .leavePending(asking.approval),
         .emit(.approvalPrompt(id: asking.approval.id, step: "left pending", detail: why))]
            + close(&asking, saying: ApprovalPrompt.leftPending)
    }

    /// The loop's own prompt gives way (Talk off or paused; with `all`, what waits is dropped too: approvals left
    /// pending with their notification, notices unsaid) or the user takes the floor (a typed turn, push-to-talk).
    mutating func abandonAsking(all: Bool) -> [Action] {
        var actions: [Action] = []
        if all {
            for case .approval(let approval) in waiting { actions.append(.leavePending(approval)) }
            waiting = []
        }
        switch state {
        case .announcing:
            actions += [.cutPrompt, .arm(.muteTail, configuration.policy.muteTail)]
        case .asking(let asking):
            actions += [.cutPrompt, .cancel(.answerTimeout), .listenFor(grammar: nil), .arm(.muteTail, configuration.policy.muteTail)]
            switch asking.step {
            case .question, .tail, .answer:
                actions += [.leavePending(asking.approval),
                            .emit(.approvalPrompt(id: asking.approval.id, step: "left pending", detail: "interrupted"))]
            case .sending, .closing:
                break
            }
        default:
            break
        }
        return actions
    }
}
