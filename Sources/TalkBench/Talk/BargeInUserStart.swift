import Foundation
import SessionBridge

/// Where in the reply the bench's user starts speaking over it in barge-in trials: seconds from the session's first
/// `speakingStarted` to when the clip is handed to the sound server. Unpinned, trial k starts `firstSeconds` plus k
/// steps in, walking across the reply's first `latestSeconds` and starting over, so some trials meet the reply
/// mid-word and some in a pause between sentences, in the same places every run. Never so late that the reply
/// ends before the user's clip does (a user who speaks over a finished reply is not barging in).
package struct BargeInUserStart: Sendable, Equatable {
    /// `--user-at-seconds`: every trial at this offset (1.5 s was the only one before the walk).
    package var pinnedSeconds: Double?
    /// How long the reply plays: `--reply-seconds`, or the short reply's `shortReplySeconds`.
    package var replySeconds: Double

    /// The first trial's offset: past the reply's first word, whose echo the canceller is still learning.
    package static let firstSeconds = 1.0
    /// Not a multiple of a syllable (about 0.2 s at 175 words per minute), so successive trials land at different
    /// points of words and pauses; 20 trials reach 7.65 s.
    package static let stepSeconds = 0.35
    /// Where the walk starts over: the reply's first ~8 s hold its first three or four sentences and their pauses.
    package static let latestSeconds = 8.0
    /// The short reply (`TalkBenchConditions.shortReply`, in the local voice or the realtime relay's) lasts about 6 s.
    package static let shortReplySeconds = 6.0
    /// Kept between the end of the user's clip and the reply's end: `replySeconds` is counted at 175 words per
    /// minute, and the voice's own speed and the bench's playback buffer move the real end by a few hundred ms.
    package static let replyTailSeconds = 0.5
    /// What `--user-at-seconds` accepts.
    package static let pinnedRange: ClosedRange<Double> = 0...60

    package init(pinnedSeconds: Double? = nil, replySeconds: Double = Self.shortReplySeconds) {
        (self.pinnedSeconds, self.replySeconds) = (pinnedSeconds, replySeconds)
    }

    /// The latest offset at which a clip of `clipSeconds` still ends while the reply plays (never under 0).
    package func latestSeconds(clipSeconds: Double) -> Double {
        max(0, min(Self.latestSeconds, replySeconds - clipSeconds - Self.replyTailSeconds))
    }

    /// Trial `trial`'s offset for a clip `clipSeconds` long.
    package func seconds(trial: Int, clipSeconds: Double) -> Double {
        if let pinnedSeconds { return pinnedSeconds }
        let latest = latestSeconds(clipSeconds: clipSeconds)
        guard latest >= Self.firstSeconds else { return latest }
        let places = Int(((latest - Self.firstSeconds) / Self.stepSeconds).rounded(.down)) + 1
        return Self.firstSeconds + Self.stepSeconds * Double(trial % places)
    }

    package var json: JSONValue {
        pinnedSeconds.map { .double($0) } ?? .string("walk \(Self.firstSeconds)+\(Self.stepSeconds)k s")
    }
}

/// One barge-in trial as the report lists it: where the user started and what came of it.
package struct BargeInTrial: Sendable, Equatable {
    package var trial: Int
    /// The planned offset (`BargeInUserStart`), from the session's first `speakingStarted` to the clip's handover (nil:
    /// not known, a trial re-judged from a folder kept without its record).
    package var userAtSeconds: Double?
    /// From the first `speakingStarted` event to the user's first voiced sample in the room.
    package var userSpeechAfterReplyMs: Double?
    /// Which of the reply's sentences (0-based, by `speakingStarted` events) was playing when the user spoke, and
    /// how far into it (from its event; its sound reaches the room a playback buffer later).
    package var sentence: Int?
    package var intoSentenceMs: Double?
    /// "stopped", "noReply", "cutBeforeUser", "notStopped".
    package var outcome: String
    package var detectionMs: Double?
    /// What a recogniser made of the user's turn as the relay received it (`RelayUserTurn`), its WER, and whether
    /// it begins with the clip's first word.
    package var wer: Double?
    package var heard: String?
    package var firstWordFirst: Bool?
    /// Native mode: the transcript the Gateway got (its relay's stand-in's words) and its WER.
    package var standInWer: Double?
    package var standInHeard: String?
    /// The session's playback underruns (its log).
    package var underruns: Int?

    package init(trial: Int, userAtSeconds: Double?, outcome: String) {
        (self.trial, self.userAtSeconds, self.outcome) = (trial, userAtSeconds, outcome)
    }

    /// Places the user's start (`spoken`) among the session's events (the reply's sentences).
    package mutating func place(spoken: Date, events: [JSONValue]) {
        let started = events.filter { $0["event"] == "speakingStarted" }.compactMap { $0["time"]?.stringValue.flatMap(TalkLoopBenchmark.eventTime) }
        guard let first = started.first else { return }
        userSpeechAfterReplyMs = spoken.timeIntervalSince(first) * 1000
        if let index = started.lastIndex(where: { $0 <= spoken }) {
            sentence = index
            intoSentenceMs = spoken.timeIntervalSince(started[index]) * 1000
        }
    }

    package var json: JSONValue {
        func rounded(_ value: Double?) -> JSONValue { value.map { .double(($0 * 100).rounded() / 100) } ?? .null }
        return [
            "trial": .int(Int64(trial)), "userAtSeconds": rounded(userAtSeconds), "userSpeechAfterReplyMs": rounded(userSpeechAfterReplyMs),
            "sentence": sentence.map { .int(Int64($0)) } ?? .null, "intoSentenceMs": rounded(intoSentenceMs),
            "outcome": .string(outcome), "detectionMs": rounded(detectionMs), "wer": rounded(wer), "heard": heard.map { .string($0) } ?? .null,
            "goFirst": firstWordFirst.map { .bool($0) } ?? .null,
            "standInWer": rounded(standInWer), "standInHeard": standInHeard.map { .string($0) } ?? .null,
            "underruns": underruns.map { .int(Int64($0)) } ?? .null,
        ]
    }
}
