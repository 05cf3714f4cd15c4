import SessionBridge
import Testing

@testable import TalkSession

/// What the machine keeps of a turn's work and of each utterance for the owner (`TurnTaking+Reply`,
/// `TurnTaking+Relay`): which turn's work is current, the Gateway voice's fall-back once per turn, where a partial's
/// audio ends for the barge-in evidence, and which utterances the transcript source hears. The rows of `TurnTakingTests`.
@Suite struct TurnTakingRelayTests {
    typealias E = TurnTaking.Event
    typealias A = TurnTaking.Action
    typealias Row = TurnTakingTests.Row

    static let relays = TurnTakingTests.configuration { $0.relays = true }
    static let wake = TurnTakingTests.configuration {
        $0.mode = .wakePhrase
        $0.wakePhrases = ["computer"]
        $0.relays = true
    }
    static let ptt = TurnTakingTests.configuration {
        $0.mode = .pushToTalk
        $0.relays = true
    }
    static let speech: E = .speechStarted(positionMs: 3000, atNs: 3_000_000_000)
    static let opened: [A] = [.emit(.speechStarted(positionMs: 3000)), .cancel(.evidenceRecheck)]
    static let over: E = .speechStarted(positionMs: 5000, atNs: 1_500_000_000)

    static let rows: [Row] = [
        // The transcript source.
        Row(name: "an utterance in always-listening goes to the transcript source", configuration: relays, before: [.control(.activate)],
            event: speech, actions: opened + [.relay(.started(positionMs: 3000))], state: .listening),
        Row(name: "without a transcript source nothing is relayed", before: [.control(.activate)], event: speech, actions: opened,
            state: .listening),
        Row(name: "its end is told to the source", configuration: relays, before: [.control(.activate), speech],
            event: .speechEnded(lastSpeechEndMs: 4000, closedAtMs: 4800, endedNs: 4_000_000_000),
            actions: [.emit(.speechEnded(lastSpeechEndMs: 4000, closedAtMs: 4800)), .relay(.ended(lastSpeechEndMs: 4000))], state: .listening),
        Row(name: "its final takes the source's words", configuration: relays, before: [.control(.activate), speech], event: .finalArriving,
            actions: [.relay(.takeFinal)], state: .listening),
        Row(name: "a final already taken is not taken again", configuration: relays, before: [.control(.activate), speech, .finalArriving],
            event: .finalArriving, actions: [], state: .listening),
        Row(name: "wake-phrase mode before the phrase relays nothing", configuration: wake, before: [.control(.activate)], event: speech,
            actions: opened, state: .waiting),
        Row(name: "wake-phrase mode relays the utterance after a lone phrase", configuration: wake,
            before: [.control(.activate), .final("computer")], event: speech,
            actions: opened + [.relay(.started(positionMs: 3000))], state: .listening),
        Row(name: "pause drops the utterance the source was hearing, once the microphone is closed", configuration: relays,
            before: [.control(.activate), speech], event: .control(.pause),
            actions: [.closeMicrophone, .relay(.dropped), .cutReply(abort: false), .cancel(.replyTimeout), .cancel(.onsetHold),
                      .cancel(.evidenceRecheck), .emit(.stateChanged(from: .listening, to: .paused, reason: "paused")), .announce(.idle)],
            state: .paused),
        Row(name: "talk stop drops it too", configuration: relays, before: [.control(.activate), speech],
            event: .control(.deactivate(.talkStop)),
            actions: [.closeMicrophone, .relay(.dropped), .cutReply(abort: false), .cancel(.replyTimeout), .cancel(.onsetHold),
                      .cancel(.evidenceRecheck), .emit(.stateChanged(from: .listening, to: .idle, reason: "talk stop"))],
            state: .idle),
        Row(name: "an utterance left open by a cancelled capture is dropped when the next opens where sound may not leave",
            configuration: ptt, before: [.control(.activate), .pushToTalk(.start(id: "c1")), speech, .pushToTalk(.cancel)], event: speech,
            actions: opened + [.relay(.dropped)], state: .waiting),

        // A partial's audio.
        Row(name: "a partial over the reply is weighed through its own audio",
            before: TurnTakingTests.speaking + [over], event: .partial("stop right there", atNs: 1_900_000_000, endMs: 5600),
            actions: [.emit(.partialTranscript("stop right there")), .cancel(.evidenceRecheck),
                      .weighBargeIn(partial: "stop right there", fromPositionMs: 5000, throughMs: 5600)],
            state: .speaking),
        Row(name: "the recheck weighs the latest partial through the latest frame",
            before: TurnTakingTests.speaking + [over, .partial("stop right", atNs: 1_800_000_000, endMs: 5400),
                                                .partial("stop right there", atNs: 1_900_000_000, endMs: 5600)],
            event: .timerFired(.evidenceRecheck), actions: [.weighBargeIn(partial: "stop right there", fromPositionMs: 5000, throughMs: nil, recheck: true)],
            state: .speaking),

        // The Gateway's voice.
        Row(name: "the Gateway voice's failure is told once in its turn", before: TurnTakingTests.speaking,
            event: .gatewayVoiceFailed(turn: 1, reason: "talk.speak failed"),
            actions: [.emit(.voiceFallback(reason: "talk.speak failed"))], state: .speaking),
        Row(name: "a second failure in the same turn is not told again",
            before: TurnTakingTests.speaking + [.gatewayVoiceFailed(turn: 1, reason: "talk.speak failed")],
            event: .gatewayVoiceFailed(turn: 1, reason: "talk.speak failed"), actions: [], state: .speaking),
        Row(name: "an older turn's failure is stale", before: TurnTakingTests.speaking + [.control(.type("and tomorrow"))],
            event: .gatewayVoiceFailed(turn: 1, reason: "talk.speak failed"), actions: [], state: .thinking),
    ]

    @Test(arguments: rows)
    func `event to actions`(row: Row) { row.check() }

    /// A turn's work is current while the machine thinks or speaks that turn, and only then.
    @Test func `the current turn is the one thought or spoken`() {
        var machine = TurnTaking()
        _ = machine.handle(.control(.activate))
        #expect(machine.currentTurn == nil)
        _ = machine.handle(.final("how is the weather"))
        #expect(machine.currentTurn == 1)
        _ = machine.handle(.playbackStarted(sentence: TurnTakingTests.reply, seconds: 2, atNs: 1_000_000_000))
        #expect(machine.currentTurn == 1)
        _ = machine.handle(.control(.type("and tomorrow")))
        #expect(machine.currentTurn == 2, "a new turn makes the one before stale")
        _ = machine.handle(.replyEnded(atNs: 2_000_000_000))
        #expect(machine.currentTurn == nil, "between turns no turn's work is current")
    }

    /// The fall-back holds for the rest of its turn, and the next turn tries the Gateway's voice again.
    @Test func `the local voice lasts for the rest of the turn`() {
        var machine = TurnTaking()
        for event in TurnTakingTests.speaking + [.gatewayVoiceFailed(turn: 1, reason: "talk.speak failed")] { _ = machine.handle(event) }
        #expect(machine.fellBackToLocalVoice(turn: 1))
        _ = machine.handle(.control(.type("and tomorrow")))
        #expect(!machine.fellBackToLocalVoice(turn: 1) && !machine.fellBackToLocalVoice(turn: 2))
    }
}
