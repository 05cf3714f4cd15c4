import SessionBridge
import Testing

@testable import TalkSession

/// `TurnTaking`'s push-to-talk captures as a table (`TurnTaking+PushToTalk`, the shape of `TurnTakingTests`): start,
/// stop, cancel and once, the capture's limits, the dropped final after a cancel, and push-to-talk mode's hold.
@Suite struct TurnTakingPushToTalkTests {
    typealias E = TurnTaking.Event
    typealias A = TurnTaking.Action
    typealias Row = TurnTakingTests.Row
    typealias R = PushToTalkResult

    static let ptt = TurnTakingTests.configuration { $0.mode = .pushToTalk }

    /// Push-to-talk mode, capture c1 open.
    static let capturing: [E] = [.control(.activate), .pushToTalk(.start(id: "c1"))]
    /// Push-to-talk mode, a `once` capture c2 open.
    static let once: [E] = [.control(.activate), .pushToTalk(.once(id: "c2"))]
    static let speech: E = .speechStarted(positionMs: 3000, atNs: 3_000_000_000)
    /// Push-to-talk mode, a typed turn's reply playing.
    static let replying: [E] = [.control(.activate), .control(.type("hi")), .playbackStarted(sentence: "Hello.", seconds: 1, atNs: 1)]

    /// The capture is over: its timers stopped, its waiters answered; in push-to-talk mode the microphone open for it
    /// is held again (`held`).
    static func ended(_ result: R, held: Bool = true) -> [A] {
        (held ? [.setMicrophone(.held)] : []) + [.cancel(.captureLimit), .cancel(.captureCloseWait), .captureEnded(result)]
    }

    static let rested: [A] = [.emit(.stateChanged(from: .listening, to: .waiting, reason: "push-to-talk heard nothing")), .announce(.idle)]

    static let rows: [Row] = [
        Row(name: "push-to-talk mode holds the microphone from the start", configuration: ptt, before: [], event: .control(.activate),
            actions: [.emit(.modeChanged(from: nil, to: .pushToTalk, reason: "started")), .openMicrophone,
                      .emit(.stateChanged(from: .idle, to: .waiting, reason: "started")), .announce(.idle)],
            state: .waiting, microphone: .held),
        Row(name: "start lets the microphone through, arms the limit, listens and answers the capture's id", configuration: ptt,
            before: [.control(.activate)], event: .pushToTalk(.start(id: "c1")),
            actions: [.setMicrophone(.open), .arm(.captureLimit, .seconds(60)),
                      .emit(.stateChanged(from: .waiting, to: .listening, reason: "push-to-talk")), .announce(.listening),
                      .answer(R(captureId: "c1"))],
            state: .listening),
        Row(name: "start during a capture answers that capture's id", configuration: ptt, before: capturing, event: .pushToTalk(.start(id: "c3")),
            actions: [.answer(R(captureId: "c1"))], state: .listening),
        Row(name: "start with Talk off opens nothing", configuration: ptt, before: [], event: .pushToTalk(.start(id: "c1")),
            actions: [.answer(R(captureId: "", status: .idle))], state: .idle),
        Row(name: "a final during the capture is collected, not sent", configuration: ptt, before: capturing, event: .final("turn on the lights"),
            actions: [], state: .listening),
        Row(name: "stop sends what it heard as one turn and holds the microphone again", configuration: ptt,
            before: capturing + [.final("turn on the lights"), .final("in the kitchen")], event: .pushToTalk(.stop),
            actions: ended(R(captureId: "c1", transcript: "turn on the lights in the kitchen", status: .queued))
                + TurnTakingHandsFreeTests.sends(1, "turn on the lights in the kitchen", from: .listening)
                + [.answer(R(captureId: "c1", transcript: "turn on the lights in the kitchen", status: .queued))],
            state: .thinking),
        Row(name: "stop with nothing heard is empty and the loop waits", configuration: ptt, before: capturing, event: .pushToTalk(.stop),
            actions: ended(R(captureId: "c1", status: .empty)) + rested + [.answer(R(captureId: "c1", status: .empty))], state: .waiting),
        Row(name: "stop during an open utterance holds the microphone and waits for its final", configuration: ptt,
            before: capturing + [speech], event: .pushToTalk(.stop),
            actions: [.setMicrophone(.held), .arm(.captureCloseWait, .seconds(5)), .answerWhenCaptureEnds(id: "c1")], state: .listening),
        Row(name: "the stopping capture's final ends it", configuration: ptt, before: capturing + [speech, .pushToTalk(.stop)],
            event: .final("lock the door"),
            actions: ended(R(captureId: "c1", transcript: "lock the door", status: .queued), held: false)
                + TurnTakingHandsFreeTests.sends(1, "lock the door", from: .listening),
            state: .thinking),
        Row(name: "no final within the close wait: the capture ends with what it has", configuration: ptt,
            before: capturing + [speech, .pushToTalk(.stop)], event: .timerFired(.captureCloseWait),
            actions: ended(R(captureId: "c1", status: .empty), held: false) + rested, state: .waiting),
        Row(name: "cancel drops what the capture heard", configuration: ptt, before: capturing + [.final("never mind this")],
            event: .pushToTalk(.cancel),
            actions: ended(R(captureId: "c1", status: .cancelled))
                + [.emit(.stateChanged(from: .listening, to: .waiting, reason: "push-to-talk cancelled")), .announce(.idle),
                   .answer(R(captureId: "c1", status: .cancelled))],
            state: .waiting),
        Row(name: "after a cancel during an utterance its final is dropped", configuration: ptt,
            before: capturing + [speech, .pushToTalk(.cancel)], event: .final("never mind"),
            actions: [.emit(.transcriptIgnored(text: "never mind", reason: "push-to-talk was cancelled"))], state: .waiting),
        Row(name: "stop or cancel with no capture open is idle, naming the last capture", configuration: ptt,
            before: capturing + [.pushToTalk(.stop)], event: .pushToTalk(.cancel),
            actions: [.answer(R(captureId: "c1", status: .idle))], state: .waiting),
        Row(name: "once listens and answers when the capture ends", configuration: ptt, before: [.control(.activate)],
            event: .pushToTalk(.once(id: "c2")),
            actions: [.setMicrophone(.open), .arm(.captureLimit, .seconds(12)),
                      .emit(.stateChanged(from: .waiting, to: .listening, reason: "push-to-talk")), .announce(.listening),
                      .answerWhenCaptureEnds(id: "c2")],
            state: .listening),
        Row(name: "once ends with the first final and sends it", configuration: ptt, before: once, event: .final("what time is it"),
            actions: ended(R(captureId: "c2", transcript: "what time is it", status: .queued))
                + TurnTakingHandsFreeTests.sends(1, "what time is it", from: .listening),
            state: .thinking),
        Row(name: "once during a capture is busy", configuration: ptt, before: capturing, event: .pushToTalk(.once(id: "c2")),
            actions: [.answer(R(captureId: "c1", status: .busy))], state: .listening),
        Row(name: "once stops by itself at its limit", configuration: ptt, before: once, event: .timerFired(.captureLimit),
            actions: ended(R(captureId: "c2", status: .empty)) + rested, state: .waiting),
        Row(name: "a capture nothing stops ends as a stop at its limit, told as one", configuration: ptt,
            before: capturing + [.final("turn on the lights")], event: .timerFired(.captureLimit),
            actions: [.note("push-to-talk capture stopped at its limit", ["talk.pttLimitSeconds": "60"])]
                + ended(R(captureId: "c1", transcript: "turn on the lights", status: .queued))
                + TurnTakingHandsFreeTests.sends(1, "turn on the lights", from: .listening)
                + [.emit(.pushToTalk(command: "stop", captureId: "c1", status: "queued", transcript: "turn on the lights"))],
            state: .thinking),
        Row(name: "talk stop cancels the open capture", configuration: ptt, before: capturing, event: .control(.deactivate(.talkStop)),
            actions: [.closeMicrophone, .cutReply(abort: false), .cancel(.replyTimeout), .cancel(.onsetHold), .cancel(.evidenceRecheck)]
                + ended(R(captureId: "c1", status: .cancelled)) + [.emit(.stateChanged(from: .listening, to: .idle, reason: "talk stop"))],
            state: .idle),
        // Pause closes the microphone: the capture can hear nothing more, and its caller is answered now.
        Row(name: "pause cancels the open capture", configuration: ptt, before: capturing, event: .control(.pause),
            actions: [.closeMicrophone, .cutReply(abort: false), .cancel(.replyTimeout), .cancel(.onsetHold), .cancel(.evidenceRecheck)]
                + ended(R(captureId: "c1", status: .cancelled)) + [.emit(.stateChanged(from: .listening, to: .paused, reason: "paused")), .announce(.idle)],
            state: .paused),
        Row(name: "an approval's answer is let through the hold while it is listened for", configuration: ptt,
            before: [.control(.activate), .approvalArrived(TurnTakingAskingTests.approval), .promptSpoken(number: 1)],
            event: .timerFired(.muteTail),
            actions: [.listenFor(grammar: TurnTakingAskingTests.grammar), .setMicrophone(.open),
                      .arm(.answerTimeout, ApprovalPrompt.answerWindow), .emit(.approvalPrompt(id: "ap-1", step: "listening", detail: nil)),
                      .emit(.stateChanged(from: .speaking, to: .listening, reason: "answer")), .announce(.listening)],
            state: .listening),

        // The microphone's one mode: held wins over the mute, and a capture is let through only once the mute is over.
        Row(name: "without barge-in a reply in push-to-talk mode plays with the microphone held", configuration: ptt, interruptOnSpeech: false,
            before: [.control(.activate), .control(.type("hi"))], event: .playbackStarted(sentence: "Hello.", seconds: 1, atNs: 1),
            actions: [.cancel(.replyTimeout), .cancel(.muteTail), .emit(.stateChanged(from: .thinking, to: .speaking, reason: "reply")),
                      .announce(.speaking)],
            state: .speaking, microphone: .held),
        Row(name: "a capture opened over a reply without barge-in stays muted for the mute tail", configuration: ptt, interruptOnSpeech: false,
            before: replying, event: .pushToTalk(.start(id: "c1")),
            actions: [.setMicrophone(.muted), .arm(.captureLimit, .seconds(60)), .cutReply(abort: true), .cancel(.replyTimeout),
                      .cancel(.onsetHold), .arm(.muteTail, .milliseconds(500)),
                      .emit(.stateChanged(from: .speaking, to: .listening, reason: "push-to-talk")), .announce(.listening),
                      .turnEnded(reason: .pushToTalk), .answer(R(captureId: "c1"))],
            state: .listening, microphone: .muted),
        Row(name: "the mute tail then lets the capture through", configuration: ptt, interruptOnSpeech: false,
            before: replying + [.pushToTalk(.start(id: "c1"))], event: .timerFired(.muteTail),
            actions: [.setMicrophone(.open)], state: .listening, microphone: .open),
        Row(name: "the mute tail after a reply in push-to-talk mode leaves the microphone held", configuration: ptt, interruptOnSpeech: false,
            before: replying + [.replyEnded(atNs: 2)], event: .timerFired(.muteTail),
            actions: [], state: .waiting, microphone: .held),
        Row(name: "a capture ending during the mute tail holds the microphone, and the tail leaves it held", configuration: ptt,
            interruptOnSpeech: false, before: replying + [.pushToTalk(.start(id: "c1")), .pushToTalk(.cancel)], event: .timerFired(.muteTail),
            actions: [], state: .waiting, microphone: .held),
        Row(name: "an approval's decision holds the microphone again", configuration: ptt,
            before: [.control(.activate), .approvalArrived(TurnTakingAskingTests.approval), .promptSpoken(number: 1), .timerFired(.muteTail)],
            event: .answerHeard("allow once", confidence: 0.9),
            actions: [.cancel(.answerTimeout), .listenFor(grammar: nil), .setMicrophone(.held), .resolveApproval(id: "ap-1", decision: .allowOnce),
                      .emit(.stateChanged(from: .listening, to: .thinking, reason: "decided")), .announce(.thinking)],
            state: .thinking, microphone: .held),
        Row(name: "a typed turn while an approval's answer is listened for holds the microphone again", configuration: ptt,
            before: [.control(.activate), .approvalArrived(TurnTakingAskingTests.approval), .promptSpoken(number: 1), .timerFired(.muteTail)],
            event: .control(.type("hi")),
            actions: [.cutPrompt, .cancel(.answerTimeout), .listenFor(grammar: nil), .arm(.muteTail, TurnTakingAskingTests.tail),
                      .leavePending(TurnTakingAskingTests.approval), .emit(.approvalPrompt(id: "ap-1", step: "left pending", detail: "interrupted"))]
                + TurnTakingHandsFreeTests.sends(1, "hi", from: .listening) + [.setMicrophone(.held)],
            state: .thinking, microphone: .held),

        // Any mode.
        Row(name: "start over the reply cuts it, aborts the run, listens, and the turn is over", before: TurnTakingTests.speaking,
            event: .pushToTalk(.start(id: "c1")),
            actions: [.arm(.captureLimit, .seconds(60)), .cutReply(abort: true), .cancel(.replyTimeout), .cancel(.onsetHold),
                      .emit(.stateChanged(from: .speaking, to: .listening, reason: "push-to-talk")), .announce(.listening),
                      .turnEnded(reason: .pushToTalk), .answer(R(captureId: "c1"))],
            state: .listening),
        Row(name: "start shuts an open wake window", configuration: TurnTakingHandsFreeTests.wake, before: TurnTakingHandsFreeTests.awake,
            event: .pushToTalk(.start(id: "c1")),
            actions: [.arm(.captureLimit, .seconds(60)), .cancel(.wakeWindow), .answer(R(captureId: "c1"))],
            state: .listening),
        Row(name: "a cancel while a typed turn runs leaves the turn", before: [.control(.activate), .pushToTalk(.start(id: "c1")), .control(.type("hello"))],
            event: .pushToTalk(.cancel),
            actions: ended(R(captureId: "c1", status: .cancelled), held: false) + [.answer(R(captureId: "c1", status: .cancelled))],
            state: .thinking),
    ]

    @Test(arguments: rows)
    func `event to actions`(row: Row) { row.check() }
}
