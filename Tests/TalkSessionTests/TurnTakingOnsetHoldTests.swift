import SessionBridge
import Testing

@testable import TalkSession

/// `TurnTaking`'s onset hold (rows, as `TurnTakingTests`): sound over the reply lowers it; when the hold runs out with
/// no utterance open, the level returns unless the microphone still hears the user's own sound, and then only until
/// `BargeInPolicy.Lowering.onsetHoldLimit`.
@Suite struct TurnTakingOnsetHoldTests {
    typealias Row = TurnTakingTests.Row
    typealias E = TurnTaking.Event
    typealias A = TurnTaking.Action
    static let speaking = TurnTakingTests.speaking
    static let lowered = TurnTakingTests.lowered
    static let restored: [A] = [.cancel(.onsetHold), .emit(.replyLevel(gain: 1, reason: "no utterance followed the sound")), .setReplyGain(1)]
    /// Sound over the reply lowered it, and the hold ran out once.
    static let ranOut: [E] = speaking + [.soundOnset(positionMs: 4000), .timerFired(.onsetHold)]
    /// …and the user's own sound went on through two holds: 2.4 s in all, the limit.
    static let heldToLimit: [E] = ranOut + [.soundOverReply(userSound: true), .timerFired(.onsetHold), .soundOverReply(userSound: true)]

    static let rows: [Row] = [
        Row(name: "the hold runs out with no utterance: the devices are asked whether the user's own sound goes on",
            before: speaking + [.soundOnset(positionMs: 4000)], event: .timerFired(.onsetHold), actions: [.weighSoundOverReply], state: .speaking),
        Row(name: "the user's own sound goes on: the hold goes on and the reply stays lowered", before: ranOut,
            event: .soundOverReply(userSound: true), actions: [.arm(.onsetHold, .milliseconds(800))], state: .speaking),
        Row(name: "the sound stopped or the echo explains it: the level returns", before: ranOut, event: .soundOverReply(userSound: false),
            actions: restored, state: .speaking),
        Row(name: "the hold ends at its limit however long the sound goes on", before: heldToLimit, event: .timerFired(.onsetHold),
            actions: [.cancel(.onsetHold), .emit(.replyLevel(gain: 1, reason: "no utterance followed the sound within 2400 ms")),
                      .setReplyGain(1)],
            state: .speaking),
        Row(name: "a held-on sound that stops: the level returns, saying how long it was held",
            before: ranOut + [.soundOverReply(userSound: true), .timerFired(.onsetHold)], event: .soundOverReply(userSound: false),
            actions: [.cancel(.onsetHold), .emit(.replyLevel(gain: 1, reason: "no utterance followed the sound within 1600 ms")),
                      .setReplyGain(1)],
            state: .speaking),
        Row(name: "the last hold is cut to the limit",
            configuration: TurnTakingTests.configuration { $0.policy.lowering.onsetHoldLimit = .milliseconds(1000) }, before: ranOut,
            event: .soundOverReply(userSound: true), actions: [.arm(.onsetHold, .milliseconds(200))], state: .speaking),
        Row(name: "an utterance that opened while the devices were asked: their answer changes nothing",
            before: ranOut + [.speechStarted(positionMs: 5000, atNs: 1_900_000_000)], event: .soundOverReply(userSound: false),
            actions: [], state: .speaking),
        Row(name: "a late utterance after the hold went on keeps the reply lowered and ends the hold",
            before: ranOut + [.soundOverReply(userSound: true)], event: .speechStarted(positionMs: 5000, atNs: 2_400_000_000),
            actions: [.emit(.speechStarted(positionMs: 5000)), .cancel(.evidenceRecheck), .cancel(.onsetHold)], state: .speaking),
        Row(name: "a reply that ended while the devices were asked: their answer changes nothing",
            before: ranOut + [.replyEnded(atNs: 3_000_000_000)], event: .soundOverReply(userSound: true), actions: [], state: .listening),
    ]

    @Test(arguments: rows)
    func row(_ row: Row) { row.check() }

    /// Issue 22's trials: the user spoke over the reply, which lowered it, and the recogniser's speech start came 740 to
    /// 1,412 ms after their onset; restored at 800 ms, the reply came back to full level over their words. The
    /// owner answers each weighing with what the microphone hears: the user's own sound all along.
    @Test func `while the user's own sound goes on, the reply stays lowered until their late utterance, and through it`() {
        var machine = TurnTaking()
        for event in Self.speaking { _ = machine.handle(event) }
        var gains: [Float] = []
        func feed(_ event: E) {
            var pending = [event]
            while !pending.isEmpty {
                for action in machine.handle(pending.removeFirst()) {
                    if case .setReplyGain(let gain) = action { gains.append(gain) }
                    if case .weighSoundOverReply = action { pending.append(.soundOverReply(userSound: true)) }
                }
            }
        }
        feed(.soundOnset(positionMs: 4000))
        feed(.timerFired(.onsetHold))  // 800 ms after the onset
        feed(.speechStarted(positionMs: 5000, atNs: 2_412_000_000))  // 1,412 ms
        feed(.timerFired(.onsetHold))  // a stale firing: the utterance cancelled it
        #expect(gains == [Self.lowered], "lowered once, and not raised under the user's words")
        feed(.speechEnded(lastSpeechEndMs: 6500, closedAtMs: 7200, endedNs: 3_000_000_000))
        #expect(gains == [Self.lowered, 1])
    }
}
