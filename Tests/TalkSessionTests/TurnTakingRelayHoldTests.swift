import SessionBridge
import Testing

@testable import TalkSession

/// What the transcript source is told of an utterance that opens over the reply (`TurnTaking+Relay`): held, so none
/// of it leaves the machine, until a barge-in on it releases it from where the user began (the first sound onset of
/// the stretch that leads to the barge-in), or its speech is heard going on past the reply's end and its echo's tail
/// (released then, while the user still speaks), or it ends within the reply and is dropped unsent. Each row is a run
/// of events and every relay step the machine returns over it, in order, with what it asks the devices on the way
/// (where a cut reply stopped, whether there was speech past the echo); the devices' answers are events of the row.
@Suite struct TurnTakingRelayHoldTests {
    typealias E = TurnTaking.Event
    typealias S = TurnTaking.RelayStep
    typealias A = TurnTaking.Action

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var configuration = TurnTakingRelayTests.relays
        var events: [E]
        var steps: [S]
        /// The questions the held utterance puts to the devices (`findReplyStop`, `weighSpeechPastEcho`), in order.
        var asks: [A] = []

        var testDescription: String { name }

        func check(sourceLocation: SourceLocation = #_sourceLocation) {
            var machine = TurnTaking(configuration)
            var seen: [S] = []
            var asked: [A] = []
            for event in events {
                for action in machine.handle(event) {
                    switch action {
                    case .relay(let step): seen.append(step)
                    case .findReplyStop, .weighSpeechPastEcho: asked.append(action)
                    default: break
                    }
                }
            }
            #expect(seen == steps, sourceLocation: sourceLocation)
            #expect(asked == asks, sourceLocation: sourceLocation)
        }
    }

    /// Talk on with the relay, a turn sent, its reply playing since t = 1 s.
    static let speaking: [E] = TurnTakingTests.speaking
    /// The reply's echo opens an utterance at 5 s in the capture stream.
    static let echoOpens: E = .speechStarted(positionMs: 5000, atNs: 1_500_000_000)
    /// The user's "go forward ten": the gate's onset at each word (250 to 700 ms apart in recorded barge-ins).
    static let userWords: [E] = [.soundOnset(positionMs: 5600), .soundOnset(positionMs: 5880), .soundOnset(positionMs: 6340)]
    /// A partial of theirs the evidence lets cut in.
    static let bargeIn: [E] = [
        .partial("go forward", atNs: 1_900_000_000, endMs: 6300),
        .bargeInEvidence(partial: "go forward", BargeInEvidence(echoExplained: 0.2, speechMs: 400), loudEnough: true, atNs: 1_950_000_000),
    ]
    static func ended(_ ms: Int, atNs: UInt64 = 2_500_000_000) -> E {
        .speechEnded(lastSpeechEndMs: ms, closedAtMs: ms + 700, endedNs: atNs)
    }

    /// The reply stops where the capture stream had reached 6 s: its echo is over at 6.7 s (`EchoTail.afterReplyMs`).
    static let replyEnds: E = .replyEnded(atNs: 2_000_000_000, heardToMs: 6000)
    static let echoEndMs = 6000 + BargeInPolicy().echoTail.afterReplyMs
    /// The user starts just before the reply's end ("go forward ten meters"), too late for a barge-in, and goes on.
    static let userAtTheEnd: [E] = [.soundOnset(positionMs: 5600), .soundOnset(positionMs: 5880), .soundOnset(positionMs: 6340)]
    /// A partial of the utterance whose audio reaches 6.9 s, past the echo's tail; the devices' answer about it.
    static let partialPastEcho: E = .partial("go forward ten meters", atNs: 2_600_000_000, endMs: 6900)
    static let askedPastEcho: A = .weighSpeechPastEcho(fromMs: echoEndMs, throughMs: 6900)
    static func pastEcho(heard: Bool) -> E { .speechPastEcho(throughMs: 6900, heard: heard) }
    /// The reply cut off other than by a barge-in: the devices say the stream stood at 6 s once it stopped.
    static let stopped: E = .replyStopped(heardToMs: 6000)

    static let rows: [Row] = [
        Row(name: "an utterance opened over the reply is relayed held", events: speaking + [echoOpens],
            steps: [.started(positionMs: 5000, held: true)]),
        Row(name: "a barge-in releases it from the user's first word, not the echo before it nor their later words",
            events: speaking + [.soundOnset(positionMs: 4800), echoOpens] + userWords + bargeIn,
            steps: [.started(positionMs: 5000, held: true), .released(onsetMs: 5600)]),
        Row(name: "an onset the user made just before the utterance opened counts",
            events: speaking + [.soundOnset(positionMs: 4950), echoOpens] + bargeIn,
            steps: [.started(positionMs: 5000, held: true), .released(onsetMs: 4950)]),
        Row(name: "with no onset heard it is released from its own start", events: speaking + [echoOpens] + bargeIn,
            steps: [.started(positionMs: 5000, held: true), .released(onsetMs: nil)]),
        Row(name: "the released utterance ends and takes the relay's words as any other",
            events: speaking + [echoOpens] + userWords + bargeIn + [ended(7000), .finalArriving],
            steps: [.started(positionMs: 5000, held: true), .released(onsetMs: 5600), .ended(lastSpeechEndMs: 7000), .takeFinal]),
        Row(name: "an utterance that ends over the reply with no barge-in is dropped unsent",
            events: speaking + [echoOpens, .soundOnset(positionMs: 5100), ended(5600), .finalArriving],
            steps: [.started(positionMs: 5000, held: true), .dropped]),
        Row(name: "a held partial does not release it",
            events: speaking + [echoOpens, .partial("go", atNs: 1_700_000_000, endMs: 5400),
                                .bargeInEvidence(partial: "go", BargeInEvidence(echoExplained: 1, speechMs: 200), loudEnough: true,
                                                 atNs: 1_710_000_000)],
            steps: [.started(positionMs: 5000, held: true)]),
        Row(name: "the reply ends and the speech ends within the echo's tail: dropped unsent",
            events: speaking + [echoOpens, .replyEnded(atNs: 2_000_000_000, heardToMs: 6000), ended(6500)],
            steps: [.started(positionMs: 5000, held: true), .dropped]),
        Row(name: "the reply ends and the speech goes on past the echo's tail with no partial there: released at its end, from the user's onset",
            events: speaking + [echoOpens, .replyEnded(atNs: 2_000_000_000, heardToMs: 6000), .soundOnset(positionMs: 6400), ended(7500),
                                .finalArriving],
            steps: [.started(positionMs: 5000, held: true), .released(onsetMs: 6400), .ended(lastSpeechEndMs: 7500), .takeFinal]),
        // Speech past the reply's end and its echo's tail, while the utterance is still open.
        Row(name: "speech heard past the echo's tail releases it at once, from the user's onset, before its end",
            events: speaking + [echoOpens] + userAtTheEnd + [replyEnds, .soundOnset(positionMs: 6800), partialPastEcho, pastEcho(heard: true)],
            steps: [.started(positionMs: 5000, held: true), .released(onsetMs: 5600)], asks: [askedPastEcho]),
        Row(name: "released past the echo, it ends and takes the relay's words as any other",
            events: speaking + [echoOpens] + userAtTheEnd + [replyEnds, partialPastEcho, pastEcho(heard: true), ended(7800), .finalArriving],
            steps: [.started(positionMs: 5000, held: true), .released(onsetMs: 5600), .ended(lastSpeechEndMs: 7800), .takeFinal],
            asks: [askedPastEcho]),
        Row(name: "a partial whose audio ends within the echo's tail asks nothing",
            events: speaking + [echoOpens, replyEnds, .partial("go forward", atNs: 2_300_000_000, endMs: 6600)],
            steps: [.started(positionMs: 5000, held: true)]),
        Row(name: "no speech heard past the echo (the utterance only kept open by the endpointer's silence): held, then dropped unsent",
            events: speaking + [echoOpens, replyEnds, partialPastEcho, pastEcho(heard: false), ended(6300), .finalArriving],
            steps: [.started(positionMs: 5000, held: true), .dropped], asks: [askedPastEcho]),
        Row(name: "an answer that comes once the utterance has ended changes nothing",
            events: speaking + [echoOpens, replyEnds, ended(6300), pastEcho(heard: true)],
            steps: [.started(positionMs: 5000, held: true), .dropped]),
        Row(name: "a partial while the reply plays asks nothing (the barge-in decides there)",
            events: speaking + [echoOpens, partialPastEcho],
            steps: [.started(positionMs: 5000, held: true)]),
        // The other ways the reply stops.
        Row(name: "the reply cut by push-to-talk: where it stopped is asked, and speech past its echo releases it",
            events: speaking + [echoOpens] + userAtTheEnd + [.pushToTalk(.start(id: "c1")), stopped, partialPastEcho, pastEcho(heard: true),
                                                              ended(7800), .finalArriving],
            steps: [.started(positionMs: 5000, held: true), .released(onsetMs: 5600), .ended(lastSpeechEndMs: 7800), .takeFinal],
            asks: [.findReplyStop, askedPastEcho]),
        Row(name: "the reply cut by push-to-talk and the echo ends within the tail: dropped unsent",
            events: speaking + [echoOpens, .pushToTalk(.start(id: "c1")), stopped, ended(6300), .finalArriving],
            steps: [.started(positionMs: 5000, held: true), .dropped], asks: [.findReplyStop]),
        Row(name: "the reply cut by a typed turn: speech past its echo releases it",
            events: speaking + [echoOpens] + userAtTheEnd + [.control(.type("and tomorrow")), stopped, partialPastEcho, pastEcho(heard: true)],
            steps: [.started(positionMs: 5000, held: true), .released(onsetMs: 5600)], asks: [.findReplyStop, askedPastEcho]),
        Row(name: "the reply cut by a typed turn and the echo ends within the tail: dropped unsent",
            events: speaking + [echoOpens, .control(.type("and tomorrow")), stopped, ended(6300), .finalArriving],
            steps: [.started(positionMs: 5000, held: true), .dropped], asks: [.findReplyStop]),
        Row(name: "a typed turn (the next turn) after the reply ended: judged against that end",
            events: speaking + [echoOpens] + userAtTheEnd + [replyEnds, .control(.type("and tomorrow")), partialPastEcho, pastEcho(heard: true)],
            steps: [.started(positionMs: 5000, held: true), .released(onsetMs: 5600)], asks: [askedPastEcho]),
        Row(name: "the next reply starts before it is released: held over that one, the earlier end forgotten",
            events: speaking + [echoOpens, replyEnds, .control(.type("and tomorrow")), .replySentences(["Tomorrow rain."]),
                                .playbackStarted(sentence: "Tomorrow rain.", seconds: 1, atNs: 2_400_000_000), partialPastEcho,
                                pastEcho(heard: true), ended(7800), .finalArriving],
            steps: [.started(positionMs: 5000, held: true), .dropped]),
        Row(name: "Talk off drops a held utterance", events: speaking + [echoOpens, replyEnds, .control(.deactivate(.stopped))],
            steps: [.started(positionMs: 5000, held: true), .dropped]),
        Row(name: "heard while the reply played though reported after it ended: held too",
            events: speaking + [.replyEnded(atNs: 2_000_000_000, heardToMs: 6000), .speechStarted(positionMs: 5500, atNs: 2_300_000_000)],
            steps: [.started(positionMs: 5500, held: true)]),
        Row(name: "no reply playing: streamed as it opens, as before",
            events: [.control(.activate), .soundOnset(positionMs: 2900), TurnTakingRelayTests.speech, ended(4000), .finalArriving],
            steps: [.started(positionMs: 3000, held: false), .ended(lastSpeechEndMs: 4000), .takeFinal]),
        Row(name: "pause drops a held utterance",
            events: speaking + [echoOpens, .control(.pause)],
            steps: [.started(positionMs: 5000, held: true), .dropped]),
        Row(name: "wake-phrase mode: nothing over the reply goes to the source", configuration: TurnTakingRelayTests.wake,
            events: [.control(.activate), .final("computer how is the weather"), .replySentences([TurnTakingTests.reply]),
                     .playbackStarted(sentence: TurnTakingTests.reply, seconds: 2, atNs: 1_000_000_000), echoOpens],
            steps: []),
    ]

    @Test(arguments: rows)
    func `events to relay steps`(row: Row) { row.check() }

    /// The release follows the stretch of onsets back from the latest only while they come close together: the
    /// capture reopened (a pause) starts its positions again, and an onset from before is not where the user began.
    @Test func `onsets from before the capture reopened are forgotten`() {
        var machine = TurnTaking(TurnTakingRelayTests.relays)
        for event in Self.speaking + [.soundOnset(positionMs: 9000), .control(.pause), .control(.resume)] { _ = machine.handle(event) }
        #expect(machine.relay.onsetsMs.isEmpty)
        #expect(machine.userOnsetMs() == nil)
    }
}
