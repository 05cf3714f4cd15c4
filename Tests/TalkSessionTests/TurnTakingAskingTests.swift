import SessionBridge
import Testing

@testable import TalkSession

/// `TurnTaking`'s asking and announcing states as a table (the shape of `TurnTakingTests`): an approval's question
/// at a pause, its answer, the second confirmation, the fallbacks, the withdrawal, the echo guard, and notices.
@Suite struct TurnTakingAskingTests {
    typealias E = TurnTaking.Event
    typealias A = TurnTaking.Action

    static let approval = PendingApproval(id: "ap-1", kind: .exec, createdAtMs: 0, expiresAtMs: 60_000, command: "rm -rf build")
    static let second = PendingApproval(id: "ap-2", kind: .exec, createdAtMs: 0, expiresAtMs: 60_000, command: "ls")
    static let question = ApprovalPrompt.question(for: approval)
    static let grammar = ApprovalPrompt.grammar(allowed: ApprovalDecision.allCases)
    static let tail = BargeInPolicy().muteTail
    static let again = ApprovalPrompt.notUnderstood + " " + ApprovalPrompt.choices(ApprovalDecision.allCases)

    static let idle = TurnTakingTests.configuration { $0.idleTimeout = .seconds(30) }
    static let on: [E] = [.control(.activate)]
    /// The question plays (prompt 1).
    static let asked: [E] = on + [.approvalArrived(approval)]
    /// The question played and the mute tail ran out: the answer is listened for.
    static let listening: [E] = asked + [.promptSpoken(number: 1), .timerFired(.muteTail)]
    static let speaking: [E] = on + [.final("how is the weather"), .replySentences(["Sunny."]),
                                     .playbackStarted(sentence: "Sunny.", seconds: 1, atNs: 1_000_000_000)]

    /// Prompt `number` says `text`, the microphone muted first (`muting`: it was open).
    static func says(_ number: Int, _ text: String, muting: Bool = true) -> [A] {
        [.cancel(.muteTail)] + (muting ? [.setMicrophone(.muted)] : []) + [.speakPrompt(number: number, text: text)]
    }

    /// The question asked (or asked again) as prompt `number`.
    static func asks(_ number: Int, _ text: String, muting: Bool = true) -> [A] { [.cancel(.answerTimeout)] + says(number, text, muting: muting) }

    static let toSpeaking: [A] = [.emit(.stateChanged(from: .listening, to: .speaking, reason: "approval")), .announce(.speaking)]
    static let askedEvent: A = .emit(.approvalPrompt(id: "ap-1", step: "asked", detail: question))

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var configuration = TurnTaking.Configuration()
        var before: [E]
        var event: E
        var actions: [A]
        var state: TalkState

        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "an approval at a pause is asked: the microphone muted, the question spoken", before: on,
            event: .approvalArrived(approval), actions: [askedEvent] + asks(1, question) + toSpeaking, state: .speaking),
        Row(name: "an approval with Talk off is not asked", before: [], event: .approvalArrived(approval), actions: [], state: .idle),
        Row(name: "an approval while the user speaks waits", before: on + [.speechStarted(positionMs: 0, atNs: 1)],
            event: .approvalArrived(approval), actions: [], state: .listening),
        Row(name: "an approval during a reply does not interrupt it", before: speaking, event: .approvalArrived(approval),
            actions: [], state: .speaking),
        Row(name: "an approval that waited for a reply is asked when it ends", before: speaking + [.approvalArrived(approval)],
            event: .replyEnded(atNs: 2_000_000_000),
            actions: [.cancel(.replyTimeout), .cancel(.onsetHold), .emit(.stateChanged(from: .speaking, to: .listening, reason: "reply done")),
                      .announce(.listening), .turnEnded(reason: .replyDone), askedEvent] + asks(1, question) + toSpeaking,
            state: .speaking),
        Row(name: "the question played: the microphone stays muted for the tail", before: asked, event: .promptSpoken(number: 1),
            actions: [.arm(.muteTail, tail)], state: .speaking),
        Row(name: "the tail over: the answers' grammar, the microphone open, the answer window armed",
            before: asked + [.promptSpoken(number: 1)], event: .timerFired(.muteTail),
            actions: [.listenFor(grammar: grammar), .setMicrophone(.open), .arm(.answerTimeout, ApprovalPrompt.answerWindow),
                      .emit(.approvalPrompt(id: "ap-1", step: "listening", detail: nil)), .emit(.stateChanged(from: .speaking, to: .listening, reason: "answer")), .announce(.listening)],
            state: .listening),
        // Always-listening's idle timeout does not run while the loop waits for an approval's answer: the user was
        // just asked something, and falling back to wake-phrase mode then would end the question unanswered.
        Row(name: "the answer window does not start the idle timeout", configuration: idle,
            before: asked + [.promptSpoken(number: 1)], event: .timerFired(.muteTail),
            actions: [.listenFor(grammar: grammar), .setMicrophone(.open), .arm(.answerTimeout, ApprovalPrompt.answerWindow),
                      .emit(.approvalPrompt(id: "ap-1", step: "listening", detail: nil)), .emit(.stateChanged(from: .speaking, to: .listening, reason: "answer")), .announce(.listening),
                      .cancel(.idle)],
            state: .listening),
        Row(name: "an idle timer that fires while the answer is listened for changes nothing", configuration: idle,
            before: listening, event: .timerFired(.idle), actions: [], state: .listening),
        Row(name: "allow once sends exactly the id read out", before: listening, event: .answerHeard("allow once", confidence: 0.9),
            actions: [.cancel(.answerTimeout), .listenFor(grammar: nil), .resolveApproval(id: "ap-1", decision: .allowOnce),
                      .emit(.stateChanged(from: .listening, to: .thinking, reason: "decided")), .announce(.thinking)],
            state: .thinking),
        Row(name: "deny denies", before: listening, event: .answerHeard("deny", confidence: nil),
            actions: [.cancel(.answerTimeout), .listenFor(grammar: nil), .resolveApproval(id: "ap-1", decision: .deny),
                      .emit(.stateChanged(from: .listening, to: .thinking, reason: "decided")), .announce(.thinking)],
            state: .thinking),
        Row(name: "the decision sent is confirmed aloud", before: listening + [.answerHeard("allow once", confidence: 0.9)],
            event: .decisionSent(id: "ap-1", failure: nil),
            actions: [.emit(.approvalPrompt(id: "ap-1", step: "allow-once", detail: nil))] + says(2, "Allowed once.")
                + [.emit(.stateChanged(from: .thinking, to: .speaking, reason: "approval")), .announce(.speaking)],
            state: .speaking),
        Row(name: "a refusal is said plainly", before: listening + [.answerHeard("deny", confidence: 0.9)],
            event: .decisionSent(id: "ap-1", failure: "That approval was already decided elsewhere."),
            actions: [.emit(.approvalPrompt(id: "ap-1", step: "failed", detail: "That approval was already decided elsewhere."))]
                + says(2, "That approval was already decided elsewhere.")
                + [.emit(.stateChanged(from: .thinking, to: .speaking, reason: "approval")), .announce(.speaking)],
            state: .speaking),
        Row(name: "the last words spoken, the loop listens again after the tail",
            before: listening + [.answerHeard("allow once", confidence: 0.9), .decisionSent(id: "ap-1", failure: nil)],
            event: .promptSpoken(number: 2),
            actions: [.arm(.muteTail, tail), .emit(.stateChanged(from: .speaking, to: .listening, reason: "approval done")), .announce(.listening)],
            state: .listening),
        Row(name: "in wake-phrase mode it waits for the phrase again after asking", configuration: { var c = TurnTaking.Configuration(); c.mode = .wakePhrase; return c }(),
            before: listening + [.answerHeard("deny", confidence: 0.9), .decisionSent(id: "ap-1", failure: nil)],
            event: .promptSpoken(number: 2),
            actions: [.arm(.muteTail, tail), .emit(.stateChanged(from: .speaking, to: .waiting, reason: "approval done")), .announce(.idle)],
            state: .waiting),
        Row(name: "allow always asks a second time", before: listening, event: .answerHeard("allow always", confidence: 0.9),
            actions: [.emit(.approvalPrompt(id: "ap-1", step: "confirm allow-always", detail: nil))] + asks(2, ApprovalPrompt.confirmAlways) + toSpeaking,
            state: .speaking),
        Row(name: "yes to the second question sends allow-always",
            before: listening + [.answerHeard("allow always", confidence: 0.9), .promptSpoken(number: 2), .timerFired(.muteTail)],
            event: .answerHeard("yes", confidence: 0.9),
            actions: [.cancel(.answerTimeout), .listenFor(grammar: nil), .resolveApproval(id: "ap-1", decision: .allowAlways),
                      .emit(.stateChanged(from: .listening, to: .thinking, reason: "decided")), .announce(.thinking)],
            state: .thinking),
        Row(name: "no to the second question reads the question again",
            before: listening + [.answerHeard("allow always", confidence: 0.9), .promptSpoken(number: 2), .timerFired(.muteTail)],
            event: .answerHeard("no", confidence: 0.9),
            actions: [.emit(.approvalPrompt(id: "ap-1", step: "repeated", detail: "not always"))] + asks(3, question) + toSpeaking,
            state: .speaking),
        Row(name: "repeat re-reads the question", before: listening, event: .answerHeard("repeat", confidence: 0.9),
            actions: [.emit(.approvalPrompt(id: "ap-1", step: "repeated", detail: nil))] + asks(2, question) + toSpeaking,
            state: .speaking),
        Row(name: "an answer heard with low confidence is asked for again", before: listening,
            event: .answerHeard("allow once", confidence: 0.05),
            actions: [.emit(.approvalPrompt(id: "ap-1", step: "not understood", detail: "allow once: confidence 0.05 under 0.2"))]
                + asks(2, again) + toSpeaking,
            state: .speaking),
        Row(name: "low confidence twice: nothing decided, left pending with a notification",
            before: listening + [.answerHeard("allow once", confidence: 0.05), .promptSpoken(number: 2), .timerFired(.muteTail)],
            event: .answerHeard("allow once", confidence: 0.05),
            actions: [.emit(.approvalPrompt(id: "ap-1", step: "not understood", detail: "allow once: confidence 0.05 under 0.2")),
                      .cancel(.answerTimeout), .listenFor(grammar: nil), .leavePending(approval),
                      .emit(.approvalPrompt(id: "ap-1", step: "left pending", detail: "not understood twice"))]
                + says(3, ApprovalPrompt.leftPending) + toSpeaking,
            state: .speaking),
        Row(name: "no answer in time: nothing decided, left pending with a notification", before: listening, event: .timerFired(.answerTimeout),
            actions: [.cancel(.answerTimeout), .listenFor(grammar: nil), .leavePending(approval),
                      .emit(.approvalPrompt(id: "ap-1", step: "left pending", detail: "no answer"))]
                + says(2, ApprovalPrompt.leftPending) + toSpeaking,
            state: .speaking),
        Row(name: "an answer begun in time holds the answer window", before: listening, event: .speechStarted(positionMs: 0, atNs: 1),
            actions: [.emit(.speechStarted(positionMs: 0)), .cancel(.evidenceRecheck), .cancel(.answerTimeout)], state: .listening),
        Row(name: "the question's echo, heard while it plays, does not answer it", before: asked + [.speechStarted(positionMs: 0, atNs: 1)],
            event: .answerHeard("allow once", confidence: 0.9),
            actions: [.emit(.transcriptIgnored(text: "allow once", reason: "heard while the approval's question played"))], state: .speaking),
        Row(name: "an utterance begun during the question is no answer even when its final comes after the microphone opened",
            before: asked + [.speechStarted(positionMs: 0, atNs: 1), .promptSpoken(number: 1), .timerFired(.muteTail)],
            event: .answerHeard("allow once", confidence: 0.9),
            actions: [.emit(.transcriptIgnored(text: "allow once", reason: "heard while the approval's question played"))], state: .listening),
        Row(name: "decided elsewhere while the question plays: withdrawn aloud, nothing sent", before: asked,
            event: .approvalWithdrawn(id: "ap-1"),
            actions: [.cutPrompt, .cancel(.answerTimeout), .listenFor(grammar: nil),
                      .emit(.approvalPrompt(id: "ap-1", step: "withdrawn", detail: "handled elsewhere"))] + says(2, ApprovalPrompt.withdrawn, muting: false),
            state: .speaking),
        Row(name: "another approval's resolution changes nothing", before: asked, event: .approvalWithdrawn(id: "ap-2"),
            actions: [], state: .speaking),
        Row(name: "our own decision coming back as resolved is not a withdrawal",
            before: listening + [.answerHeard("allow once", confidence: 0.9)], event: .approvalWithdrawn(id: "ap-1"), actions: [], state: .thinking),
        Row(name: "an approval arriving meanwhile waits, and the answer decides only the one read out",
            before: listening + [.approvalArrived(second)], event: .answerHeard("allow once", confidence: 0.9),
            actions: [.cancel(.answerTimeout), .listenFor(grammar: nil), .resolveApproval(id: "ap-1", decision: .allowOnce),
                      .emit(.stateChanged(from: .listening, to: .thinking, reason: "decided")), .announce(.thinking)],
            state: .thinking),
        Row(name: "the next approval is asked once the first is done",
            before: listening + [.approvalArrived(second), .answerHeard("allow once", confidence: 0.9), .decisionSent(id: "ap-1", failure: nil)],
            event: .promptSpoken(number: 2),
            actions: [.arm(.muteTail, tail), .emit(.stateChanged(from: .speaking, to: .listening, reason: "approval done")), .announce(.listening),
                      .emit(.approvalPrompt(id: "ap-2", step: "asked", detail: ApprovalPrompt.question(for: second)))]
                + asks(3, ApprovalPrompt.question(for: second), muting: false) + toSpeaking,
            state: .speaking),
        Row(name: "talk stop while asking: the prompt stops and the approval is left pending", before: asked,
            event: .control(.deactivate(.talkStop)),
            actions: [.closeMicrophone, .cutReply(abort: false), .cancel(.replyTimeout), .cancel(.onsetHold), .cancel(.evidenceRecheck),
                      .cutPrompt, .cancel(.answerTimeout), .listenFor(grammar: nil), .arm(.muteTail, tail), .leavePending(approval),
                      .emit(.approvalPrompt(id: "ap-1", step: "left pending", detail: "interrupted")),
                      .emit(.stateChanged(from: .speaking, to: .idle, reason: "talk stop"))],
            state: .idle),
        Row(name: "a typed turn while asking: left pending, the turn goes out", before: listening, event: .control(.type("hi")),
            actions: [.cutPrompt, .cancel(.answerTimeout), .listenFor(grammar: nil), .arm(.muteTail, tail), .leavePending(approval),
                      .emit(.approvalPrompt(id: "ap-1", step: "left pending", detail: "interrupted")),
                      .sendTurn(number: 1, transcript: "hi", interruptedAtSeconds: nil), .arm(.replyTimeout, .seconds(340)),
                      .emit(.stateChanged(from: .listening, to: .thinking, reason: "transcript sent")), .announce(.thinking)],
            state: .thinking),
        Row(name: "a notice at a pause is spoken with the microphone muted", before: on, event: .noticeArrived("The build finished."),
            actions: says(1, "The build finished.") + [.emit(.stateChanged(from: .listening, to: .speaking, reason: "notice")), .announce(.speaking)],
            state: .speaking),
        Row(name: "a notice during a reply waits for its end", before: speaking, event: .noticeArrived("The build finished."),
            actions: [], state: .speaking),
        Row(name: "a notice while the user speaks waits", before: on + [.speechStarted(positionMs: 0, atNs: 1)],
            event: .noticeArrived("The build finished."), actions: [], state: .listening),
        Row(name: "a notice that waited is spoken once the user's words are in and nothing else is going on",
            before: on + [.speechStarted(positionMs: 0, atNs: 1), .noticeArrived("The build finished.")], event: .final(""),
            actions: [.emit(.transcriptIgnored(text: "", reason: "empty transcript"))] + says(1, "The build finished.")
                + [.emit(.stateChanged(from: .listening, to: .speaking, reason: "notice")), .announce(.speaking)],
            state: .speaking),
        Row(name: "a notice with Talk paused is dropped", before: on + [.control(.pause)], event: .noticeArrived("The build finished."),
            actions: [], state: .paused),
        Row(name: "the notice spoken, the loop rests again after the tail", before: on + [.noticeArrived("The build finished.")],
            event: .promptSpoken(number: 1),
            actions: [.arm(.muteTail, tail), .emit(.stateChanged(from: .speaking, to: .listening, reason: "notice spoken")), .announce(.listening)],
            state: .listening),
    ]

    @Test(arguments: rows)
    func `event to actions`(row: Row) {
        var machine = TurnTaking(row.configuration)
        for event in row.before { _ = machine.handle(event) }
        let actions = machine.handle(row.event)
        #expect(actions == row.actions)
        #expect(machine.state.talkState == row.state)
    }

    @Test func `a notice dropped while paused is not spoken after resume`() {
        var machine = TurnTaking()
        for event in Self.on + [.control(.pause), .noticeArrived("The build finished.")] { _ = machine.handle(event) }
        #expect(!machine.handle(.control(.resume)).contains { if case .speakPrompt = $0 { true } else { false } })
    }
}
