import SessionBridge

/// What one live self-echo trial of `bench talk` came to, read from the `run` child's JSON events and, in realtime
/// mode, from what the reference Gateway's realtime relay recorded of the trial (`relay-log`, `relay-turns`): whether
/// a reply played, whether it ended before the bench stopped the session, and every way it interrupted itself. No
/// I/O: the bench gathers the events, this judges them.
///
/// A reply interrupts itself when its own echo cuts it or is answered: the client's barge-in guard stops it, the
/// relay's provider VAD clears it (the relay took the echo for the user starting to speak), the client's output
/// queue overflows and cuts it, the echo goes to the Gateway as a turn of its own, or another answer begins.
package struct SelfEchoVerdict: Sendable, Equatable {
    package enum Reason: String, Sendable, CaseIterable {
        /// The client's barge-in guard stopped the reply (a `bargeIn` event the relay did not cause).
        case bargeIn = "barge-in"
        /// The realtime relay cleared the answer while it played: its provider VAD heard "the user" start.
        case relayCleared = "relay-cleared"
        /// The realtime client's output queue overflowed and cut the answer (`cancelOutput` reason
        /// `playback-overflow`).
        case playbackOverflow = "playback-overflow"
        /// The echo reached the Gateway as a turn of its own (more than the one turn the clip made).
        case echoTurn = "echo-turn"
        /// More than one answer began (`replyFinal`): the echo, or the echo's turn, was answered.
        case answeredAgain = "answered-again"
    }

    /// A reply began to play (`speakingStarted`).
    package var replied = false
    /// The first reply stopped playing (done, or cut) before the bench stopped the session: false when it was
    /// still playing at the end of the bench's wait, stuck or never ending, which a user notices.
    package var finished = false
    /// Every way the reply interrupted itself, in `Reason`'s order; empty for a clean trial.
    package var reasons: [Reason] = []
    /// What the recogniser (or the relay) made of the echo where a barge-in cut the reply.
    package var partial: String?

    /// What the realtime relay recorded of one trial (the reference Gateway's `relay-log` and `relay-turns`).
    package struct RelayRecord: Sendable, Equatable {
        package var log: [JSONValue]
        /// Turns the relay finished (each one answered): the clip's, and any the echo made.
        package var turns: Int
        package init(log: [JSONValue], turns: Int) { (self.log, self.turns) = (log, turns) }
    }

    /// The reason the client's cancel carries, and the error it shows, when its output queue overflows
    /// (`RealtimeTalkSession`).
    static let overflowCancelReason = "playback-overflow"
    static let overflowError = "the relay's audio came faster than it plays; the output is cut"
    /// The reason the client's cancel carries when its barge-in guard stopped the answer.
    static let bargeInCancelReason = "barge-in"
    /// The state a session goes to idle with when the bench stops it (`TalkOffReason.stopped`).
    static let stoppedReason = "stopped"

    package init() {}

    /// `events`: the child's JSON events; `turnEvent`: the event a turn sent to the Gateway shows as
    /// (`transcriptSent`, or the relay's `final` in realtime mode); `relay`: what the realtime relay recorded of the
    /// trial (nil in native mode, where the relay only transcribes).
    package init(events: [JSONValue], turnEvent: String, relay: RelayRecord? = nil) {
        func named(_ name: String) -> [JSONValue] { events.filter { $0["event"]?.stringValue == name } }
        if let start = events.firstIndex(where: { $0["event"] == "speakingStarted" }) {
            replied = true
            let left = events[start...].first { $0["event"] == "state" && $0["from"] == "speaking" }
            finished = left.map { $0["reason"]?.stringValue != Self.stoppedReason } ?? false
        }
        let cancels = (relay?.log ?? []).filter { $0["kind"] == "cancel" }.compactMap { $0["reason"]?.stringValue }
        let bargeIns = named("bargeIn")
        // In realtime mode a relay's clear while the answer plays shows as a `bargeIn` too; the guard's own are
        // those the client cancelled the answer for.
        let guardCuts = relay == nil ? bargeIns.count : min(bargeIns.count, cancels.filter { $0 == Self.bargeInCancelReason }.count)
        var found: Set<Reason> = []
        if guardCuts > 0 { found.insert(.bargeIn) }
        if bargeIns.count > guardCuts { found.insert(.relayCleared) }
        let overflowShown = named("error").contains { $0["message"]?.stringValue == Self.overflowError }
        if cancels.contains(Self.overflowCancelReason) || overflowShown { found.insert(.playbackOverflow) }
        if max(named(turnEvent).count, relay?.turns ?? 0) > 1 { found.insert(.echoTurn) }
        if named("replyFinal").count > 1 { found.insert(.answeredAgain) }
        reasons = Reason.allCases.filter(found.contains)
        partial = bargeIns.first.map { $0["partial"]?.stringValue ?? "" }
    }

    /// Whether the reply interrupted itself in any way.
    package var interrupted: Bool { !reasons.isEmpty }
}
