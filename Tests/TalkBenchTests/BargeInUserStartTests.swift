import Foundation
import SessionBridge
import TalkBench
import Testing

/// Where the barge-in trials' user starts in the reply: across it, mid-word and in pauses, the same every run, and
/// never so late that the reply has ended before the user's clip does.
@Suite struct BargeInUserStartTests {
    /// The bench's clip, "go forward ten meters", is 2.79 s long.
    static let clipSeconds = 2.79

    @Test func `twenty trials over a long reply start at twenty places across its first 8 s, the same every run`() {
        let start = TalkBenchConditions(replySeconds: 25).userStart
        let offsets = (0..<20).map { start.seconds(trial: $0, clipSeconds: Self.clipSeconds) }
        #expect(offsets == (0..<20).map { 1.0 + 0.35 * Double($0) })
        #expect(Set(offsets).count == 20 && offsets.allSatisfy { $0 >= 1 && $0 <= 8 })
        #expect(offsets == (0..<20).map { TalkBenchConditions(replySeconds: 25).userStart.seconds(trial: $0, clipSeconds: Self.clipSeconds) })
    }

    @Test(arguments: [nil, 5, 6, 8] as [Int?])
    func `the user's clip ends while the reply still plays`(replySeconds: Int?) {
        let start = TalkBenchConditions(replySeconds: replySeconds).userStart
        let reply = Double(replySeconds ?? 6)
        let offsets = (0..<20).map { start.seconds(trial: $0, clipSeconds: Self.clipSeconds) }
        for offset in offsets { #expect(offset + Self.clipSeconds <= reply - 0.5, "user at \(offset) s in a \(reply) s reply") }
        #expect(Set(offsets).count > 1, "one place only: \(offsets)")
    }

    @Test func `a reply shorter than the clip starts the user at its start`() {
        let start = TalkBenchConditions(replySeconds: 2).userStart
        #expect((0..<5).map { start.seconds(trial: $0, clipSeconds: Self.clipSeconds) } == [0, 0, 0, 0, 0])
    }

    @Test func `--user-at-seconds pins every trial, and the report says where the user started`() {
        let pinned = TalkBenchConditions(replySeconds: 25, userAtSeconds: 1.5)
        #expect((0..<20).map { pinned.userStart.seconds(trial: $0, clipSeconds: Self.clipSeconds) } == Array(repeating: 1.5, count: 20))
        #expect(pinned.json["userAtSeconds"] == .double(1.5))
        #expect(TalkBenchConditions().json["userAtSeconds"]?.stringValue?.hasPrefix("walk") == true)
    }

    @Test func `a trial places the user's start in the reply's sentence that was playing`() throws {
        let first = Date(timeIntervalSince1970: 1_000)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let event = { (name: String, at: Double) -> JSONValue in
            ["event": .string(name), "time": .string(formatter.string(from: first.addingTimeInterval(at)))]
        }
        let events = [event("speakingStarted", 0), event("speakingStopped", 2.2), event("speakingStarted", 2.3), event("bargeIn", 4)]
        var trial = BargeInTrial(trial: 3, userAtSeconds: 2.05, outcome: "stopped")
        trial.place(spoken: first.addingTimeInterval(3.5), events: events)
        #expect(trial.sentence == 1)
        let into = try #require(trial.intoSentenceMs)
        let afterReply = try #require(trial.userSpeechAfterReplyMs)
        #expect(abs(into - 1_200) < 1 && abs(afterReply - 3_500) < 1)
        #expect(trial.json["userAtSeconds"] == .double(2.05) && trial.json["sentence"] == .int(1))
    }
}
