import SessionBridge
import Testing

@testable import TalkSession

/// `TurnTaking`'s hands-free mode as tables (`TurnTaking+HandsFree`): what a final becomes in wake-phrase and
/// push-to-talk mode, the wake window, and the idle timeout's fall-back to wake-phrase mode and back. The same rows
/// as `TurnTakingTests`: from a state reached by a few events, one event, the actions in order and the state left.
@Suite struct TurnTakingHandsFreeTests {
    typealias E = TurnTaking.Event
    typealias A = TurnTaking.Action
    typealias Row = TurnTakingTests.Row

    static let wake = TurnTakingTests.configuration {
        $0.mode = .wakePhrase
        $0.wakePhrases = ["computer"]
    }
    static let idle = TurnTakingTests.configuration {
        $0.idleTimeout = .seconds(30)
        $0.wakePhrases = ["hey open claw"]
    }
    static let ptt = TurnTakingTests.configuration { $0.mode = .pushToTalk }

    /// Wake-phrase mode: a request after the phrase, its reply's first sentence playing since t = 1 s (2 s long).
    static let wakeSpeaking: [E] = [
        .control(.activate), .final("computer how is the weather"), .replySentences([TurnTakingTests.reply]),
        .playbackStarted(sentence: TurnTakingTests.reply, seconds: 2, atNs: 1_000_000_000),
    ]

    /// Wake-phrase mode, the window after a lone phrase open.
    static let awake: [E] = [.control(.activate), .final("computer")]

    static func sends(_ number: Int, _ text: String, from: TalkState) -> [A] {
        [.sendTurn(number: number, transcript: text, interruptedAtSeconds: nil), .arm(.replyTimeout, .seconds(340)),
         .emit(.stateChanged(from: from, to: .thinking, reason: "transcript sent")), .announce(.thinking)]
    }

    static let rows: [Row] = [
        // Wake-phrase mode.
        Row(name: "without the phrase a final is ignored and the loop goes on waiting", configuration: wake,
            before: [.control(.activate)], event: .final("turn on the lights"),
            actions: [.emit(.transcriptIgnored(text: "turn on the lights", reason: "no wake phrase"))], state: .waiting),
        Row(name: "the words after the phrase are the request", configuration: wake,
            before: [.control(.activate)], event: .final("computer turn on the lights"),
            actions: [.emit(.wakePhrase(phrase: "computer", command: "turn on the lights"))] + sends(1, "turn on the lights", from: .waiting),
            state: .thinking),
        Row(name: "a phrase on its own opens the window and listens", configuration: wake,
            before: [.control(.activate)], event: .final("computer"),
            actions: [.emit(.wakePhrase(phrase: "computer", command: "")), .arm(.wakeWindow, .seconds(8)),
                      .emit(.stateChanged(from: .waiting, to: .listening, reason: "wake phrase")), .announce(.listening)],
            state: .listening),
        Row(name: "in the window the next final is the request, whole, and the window shuts", configuration: wake,
            before: awake, event: .final("what time is it"),
            actions: [.cancel(.wakeWindow)] + sends(1, "what time is it", from: .listening), state: .thinking),
        Row(name: "nothing said in the window: the loop waits for the phrase again", configuration: wake,
            before: awake, event: .timerFired(.wakeWindow),
            actions: [.emit(.stateChanged(from: .listening, to: .waiting, reason: "nothing said after the wake phrase")), .announce(.idle)],
            state: .waiting),
        Row(name: "speech begun in the window keeps it open: it looks again in a second", configuration: wake,
            before: awake + [.speechStarted(positionMs: 3000, atNs: 3_000_000_000)], event: .timerFired(.wakeWindow),
            actions: [.arm(.wakeWindow, .seconds(1))], state: .listening),
        Row(name: "an empty final in the window leaves it open", configuration: wake,
            before: awake + [.speechStarted(positionMs: 3000, atNs: 3_000_000_000)], event: .final(""),
            actions: [.emit(.transcriptIgnored(text: "", reason: "empty transcript"))], state: .listening),
        Row(name: "after an empty final the window still shuts", configuration: wake,
            before: awake + [.speechStarted(positionMs: 3000, atNs: 3_000_000_000), .final("")], event: .timerFired(.wakeWindow),
            actions: [.emit(.stateChanged(from: .listening, to: .waiting, reason: "nothing said after the wake phrase")), .announce(.idle)],
            state: .waiting),
        Row(name: "a lone phrase while the agent thinks drops that turn and listens", configuration: wake,
            before: awake + [.final("what time is it")], event: .final("computer"),
            actions: [.emit(.wakePhrase(phrase: "computer", command: "")), .arm(.wakeWindow, .seconds(8)),
                      .cutReply(abort: false), .cancel(.replyTimeout),
                      .emit(.stateChanged(from: .thinking, to: .listening, reason: "wake phrase")), .announce(.listening),
                      .turnEnded(reason: .wakePhrase)],
            state: .listening),
        Row(name: "over the reply, words without the phrase do not cut in", configuration: wake,
            before: wakeSpeaking + [.speechStarted(positionMs: 5000, atNs: 1_500_000_000)],
            event: .partial("stop right there", atNs: 1_900_000_000),
            actions: [.emit(.partialTranscript("stop right there")), .cancel(.evidenceRecheck)], state: .speaking),
        Row(name: "over the reply, words with the phrase are weighed", configuration: wake,
            before: wakeSpeaking + [.speechStarted(positionMs: 5000, atNs: 1_500_000_000)],
            event: .partial("computer stop", atNs: 1_900_000_000),
            actions: [.emit(.partialTranscript("computer stop")), .cancel(.evidenceRecheck),
                      .weighBargeIn(partial: "computer stop", fromPositionMs: 5000)],
            state: .speaking),
        Row(name: "talk stop shuts an open window", configuration: wake, before: awake, event: .control(.deactivate(.talkStop)),
            actions: [.closeMicrophone, .cutReply(abort: false), .cancel(.replyTimeout), .cancel(.onsetHold), .cancel(.evidenceRecheck),
                      .cancel(.wakeWindow), .emit(.stateChanged(from: .listening, to: .idle, reason: "talk stop"))],
            state: .idle),
        // Pause closes the microphone: a window open before it must not take words said after resume as a request.
        Row(name: "pause shuts an open window", configuration: wake, before: awake, event: .control(.pause),
            actions: [.closeMicrophone, .cutReply(abort: false), .cancel(.replyTimeout), .cancel(.onsetHold), .cancel(.evidenceRecheck),
                      .cancel(.wakeWindow), .emit(.stateChanged(from: .listening, to: .paused, reason: "paused")), .announce(.idle)],
            state: .paused),

        // Push-to-talk mode.
        Row(name: "between captures a final is ignored", configuration: ptt, before: [.control(.activate)], event: .final("private words"),
            actions: [.emit(.transcriptIgnored(text: "private words", reason: "push-to-talk is not capturing"))], state: .waiting),

        // The idle timeout.
        Row(name: "always-listening arms the idle timeout as it starts", configuration: idle, before: [], event: .control(.activate),
            actions: [.emit(.modeChanged(from: nil, to: .alwaysListening, reason: "started")), .openMicrophone,
                      .emit(.stateChanged(from: .idle, to: .listening, reason: "started")), .announce(.listening), .arm(.idle, .seconds(30))],
            state: .listening),
        Row(name: "speech starts the idle timeout again", configuration: idle, before: [.control(.activate)],
            event: .speechStarted(positionMs: 5000, atNs: 5_000_000_000),
            actions: [.emit(.speechStarted(positionMs: 5000)), .cancel(.evidenceRecheck), .arm(.idle, .seconds(30))], state: .listening),
        Row(name: "a turn stops the idle timeout", configuration: idle, before: [.control(.activate)], event: .final("hello"),
            actions: sends(1, "hello", from: .listening) + [.cancel(.idle)], state: .thinking),
        Row(name: "the reply done starts it again", configuration: idle, before: [.control(.activate), .final("hello")],
            event: .replyEnded(atNs: 3_000_000_000),
            actions: [.cancel(.replyTimeout), .emit(.stateChanged(from: .thinking, to: .listening, reason: "reply done")), .announce(.listening),
                      .turnEnded(reason: .replyDone), .arm(.idle, .seconds(30))],
            state: .listening),
        Row(name: "idle: always-listening falls back to wake-phrase mode and waits", configuration: idle,
            before: [.control(.activate)], event: .timerFired(.idle),
            actions: [.emit(.modeChanged(from: .alwaysListening, to: .wakePhrase, reason: "no interaction for 30 s")),
                      .emit(.stateChanged(from: .listening, to: .waiting, reason: "idle timeout")), .announce(.idle), .cancel(.idle)],
            state: .waiting),
        Row(name: "idle while the user speaks: the timeout starts again", configuration: idle,
            before: [.control(.activate), .speechStarted(positionMs: 5000, atNs: 5_000_000_000)], event: .timerFired(.idle),
            actions: [.arm(.idle, .seconds(30))], state: .listening),
        Row(name: "idled out, a final without the phrase is ignored", configuration: idle,
            before: [.control(.activate), .timerFired(.idle)], event: .final("is anyone there"),
            actions: [.emit(.transcriptIgnored(text: "is anyone there", reason: "no wake phrase"))], state: .waiting),
        Row(name: "idled out, a wake phrase brings always-listening back", configuration: idle,
            before: [.control(.activate), .timerFired(.idle)], event: .final("hey open claw"),
            actions: [.emit(.wakePhrase(phrase: "hey open claw", command: "")),
                      .emit(.modeChanged(from: .wakePhrase, to: .alwaysListening, reason: "wake phrase")),
                      .emit(.stateChanged(from: .waiting, to: .listening, reason: "wake phrase")), .announce(.listening),
                      .arm(.idle, .seconds(30))],
            state: .listening),
        Row(name: "back in always-listening no phrase is needed", configuration: idle,
            before: [.control(.activate), .timerFired(.idle), .final("hey open claw")], event: .final("what time is it"),
            actions: sends(1, "what time is it", from: .listening) + [.cancel(.idle)], state: .thinking),
        Row(name: "talk.config's idle timeout arms it", before: [.control(.activate)], event: .idleTimeoutChanged(.seconds(5)),
            actions: [.arm(.idle, .seconds(5))], state: .listening),
        Row(name: "no idle timeout any more stops it", configuration: idle, before: [.control(.activate)], event: .idleTimeoutChanged(nil),
            actions: [.cancel(.idle)], state: .listening),
        Row(name: "talk stop stops the idle timeout", configuration: idle, before: [.control(.activate)],
            event: .control(.deactivate(.talkStop)),
            actions: [.closeMicrophone, .cutReply(abort: false), .cancel(.replyTimeout), .cancel(.onsetHold), .cancel(.evidenceRecheck),
                      .cancel(.idle), .emit(.stateChanged(from: .listening, to: .idle, reason: "talk stop"))],
            state: .idle),
    ]

    @Test(arguments: rows)
    func `event to actions`(row: Row) { row.check() }

    /// The transcription relay hears only what the mode lets leave the machine.
    @Test func `sound leaves the machine only where the mode lets it`() {
        var always = TurnTaking()
        _ = always.handle(.control(.activate))
        #expect(always.mayLeaveMachine)

        var wake = TurnTaking(Self.wake)
        _ = wake.handle(.control(.activate))
        #expect(!wake.mayLeaveMachine, "before the phrase")
        _ = wake.handle(.final("computer"))
        #expect(wake.mayLeaveMachine, "in the window a lone phrase opened")
        _ = wake.handle(.timerFired(.wakeWindow))
        #expect(!wake.mayLeaveMachine, "after the window shut")

        var ptt = TurnTaking(Self.ptt)
        _ = ptt.handle(.control(.activate))
        #expect(!ptt.mayLeaveMachine, "between captures")
        _ = ptt.handle(.pushToTalk(.start(id: "c1")))
        #expect(ptt.mayLeaveMachine, "during a capture")
    }
}
