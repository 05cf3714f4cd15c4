import Foundation
import SessionBridge

/// Where a native barge-in trial's judged words come from (`bench talk --live-stt`).
package enum LiveSTT: String, Sendable, CaseIterable {
    /// The sessions run as `run` does by default (`--stt auto`): the reference Gateway offers its transcription
    /// relay, and the words are recognised by the bench from the audio the client sent it (`RelayUserTurn`).
    case relay
    /// The sessions run `run --stt local`: the client sends its own recogniser's transcript, as it does with a
    /// Gateway that has no Talk provider, and the words judged are that transcript as sent (`SentUserWords`).
    case local

    /// What `run` is given for this path beyond the session's own options.
    package var runArguments: [String] { self == .local ? ["--stt", "local"] : [] }
}

/// What a client that recognises the user itself (`run --stt local`) sent as their words after a barge-in: the text
/// of the first `transcriptSent` event after the cut, as the Gateway got it. No I/O: the bench gathers the events.
package enum SentUserWords: Sendable, Equatable {
    /// The reply was not cut by a barge-in.
    case notCut
    /// Cut, but no transcript went to the Gateway after it: the user's words were lost.
    case noTurnAfter
    /// Cut, and this transcript went on as the user's turn.
    case sent(String)

    private static func time(_ event: JSONValue) -> Date? { event["time"]?.stringValue.flatMap(TalkLoopBenchmark.eventTime) }

    package static func native(events: [JSONValue]) -> SentUserWords {
        guard let cut = events.first(where: { $0["event"] == "bargeIn" }).flatMap(time) else { return .notCut }
        guard let sent = events.first(where: { $0["event"] == "transcriptSent" && (time($0).map { $0 > cut } ?? false) }) else {
            return .noTurnAfter
        }
        return .sent(sent["text"]?.stringValue ?? "")
    }
}
