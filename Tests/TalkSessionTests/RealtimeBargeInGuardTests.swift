import AudioIO
import Testing

@testable import TalkSession

/// The realtime guard's sound rule, for a relay that sends none of the user's words (the reference Gateway's
/// realtime relay, providers without input transcription): the user's own sound, which the answer's audio does
/// not explain, stops the answer once it has lasted `minimumUserSoundMs`, however quiet; the answer's echo, however
/// loud and long, never does; a knock shorter than the minimum does not.
@Suite struct RealtimeBargeInGuardTests {
    /// Apple's level rule, `RealtimeTalkSession.Settings.bargeInRMS` (0.08 of full scale).
    static let levelRMS = RealtimeTalkSession.Settings().bargeInRMS
    static let minimumFrames = RealtimeBargeInGuard.minimumUserSoundMs / AudioFrame.durationMs

    /// A guard fed frames in order, 20 ms apart on its clock; `decisions` holds what it said after each.
    struct Feed {
        var guardian = RealtimeBargeInGuard()
        var sequence: UInt64 = 0
        var decisions: [Bool] = []

        var nowNs: UInt64 { sequence * 20_000_000 }

        /// `count` frames of a square wave of `amplitude` (its RMS), each `explained` by the answer's audio. As
        /// speech: every tenth frame is a pause (RMS 60), or a steady sound raises the noise floor to itself.
        mutating func hear(amplitude: Int16, count: Int, explained: Float?) {
            hear(amplitude: amplitude, count: count) { _ in explained }
        }

        /// As `hear(amplitude:count:explained:)`, frame `index` (from 0) `explained(index)` by the answer's audio.
        mutating func hear(amplitude: Int16, count: Int, explained: (Int) -> Float?) {
            for index in 0..<count {
                let level = index % 10 == 9 ? min(amplitude, 60) : amplitude
                var frame = AudioFrame(sequence: sequence, captureTimeNs: 0,
                                       samples: (0..<AudioFrame.samplesPerFrame).map { $0 % 20 < 10 ? level : -level })
                frame.echoExplained = explained(index)
                guardian.hear(frame, atNs: nowNs)
                decisions.append(guardian.isUserSpeech(nowNs: nowNs, levelRMS: RealtimeBargeInGuardTests.levelRMS))
                sequence += 1
            }
        }

        /// The frame (counted from 0) at which the guard first said the user cut in.
        var firstBargeIn: Int? { decisions.firstIndex(of: true) }
    }

    /// A quiet room, then the answer's echo as the canceller leaves it (explained by the answer's audio, under the
    /// audible level) for 1 s.
    static func answering() -> Feed {
        var feed = Feed()
        feed.hear(amplitude: 40, count: 25, explained: nil)
        feed.hear(amplitude: 60, count: 50, explained: 1)
        return feed
    }

    @Test func `a user quieter than Apple's level stops the answer once their own sound has lasted the minimum`() {
        var feed = Self.answering()
        let userStarts = feed.decisions.count
        feed.hear(amplitude: 1_200, count: 40, explained: 0.1)   // RMS 1 200: under 0.08 of full scale (2 621)
        #expect(feed.firstBargeIn == userStarts + Self.minimumFrames - 1, "decisions: \(feed.decisions)")
        #expect(feed.guardian.soundStartNs == UInt64(userStarts) * 20_000_000, "the latency runs from the user's first frame")
    }

    @Test func `the answer's own echo, loud and long, never stops it`() {
        var feed = Self.answering()
        feed.hear(amplitude: 5_000, count: 150, explained: 0.9)   // a leak of the echo over Apple's level, for 3 s
        feed.hear(amplitude: 60, count: 10, explained: 1)
        feed.hear(amplitude: 4_000, count: 100, explained: 1)
        #expect(feed.firstBargeIn == nil)
    }

    @Test func `a knock shorter than the minimum does not stop the answer, however loud`() {
        var feed = Self.answering()
        feed.hear(amplitude: 8_000, count: Self.minimumFrames - 2, explained: 0)
        feed.hear(amplitude: 60, count: 50, explained: 1)
        #expect(feed.firstBargeIn == nil)
    }

    @Test func `a user who starts over the answer's loud echo stops it the minimum after their own sound began`() {
        var feed = Self.answering()
        feed.hear(amplitude: 3_000, count: 50, explained: 1)   // the echo, loud, for 1 s before the user
        let userStarts = feed.decisions.count
        feed.hear(amplitude: 3_000, count: 40, explained: 0.2)
        #expect(feed.firstBargeIn == userStarts + Self.minimumFrames - 1, "decisions: \(feed.decisions)")
        #expect(feed.guardian.soundStartNs == UInt64(userStarts) * 20_000_000)
    }

    @Test func `sound the answer mostly explains does not stop it, even with the user's frames among it`() {
        var feed = Self.answering()
        // Three frames of the user's start their sound; then one in twenty is theirs, the rest the echo.
        feed.hear(amplitude: 2_000, count: 3, explained: 0.1)
        feed.hear(amplitude: 2_000, count: 100) { $0 % 20 == 18 ? 0.1 : 1 }
        #expect(feed.guardian.hearsSound)
        #expect(feed.firstBargeIn == nil)
    }

    @Test func `on echo-cancelled capture without the canceller's measure (--aec pulse), Apple's level rule decides`() {
        var quiet = Feed()
        quiet.hear(amplitude: 40, count: 25, explained: nil)
        quiet.hear(amplitude: 1_200, count: 50, explained: nil)
        #expect(quiet.firstBargeIn == nil)
        var loud = Feed()
        loud.hear(amplitude: 40, count: 25, explained: nil)
        loud.hear(amplitude: 3_000, count: 2, explained: nil)
        #expect(loud.firstBargeIn == 25)
    }

    /// `--aec off`: the answer's own sound reaches the microphone as loud as a user, and nothing tells them apart.
    @Test func `without echo cancellation nothing heard over the answer stops it, however loud or long, words or not`() {
        var feed = Feed(guardian: RealtimeBargeInGuard(echoCancelled: false))
        feed.hear(amplitude: 40, count: 25, explained: nil)
        feed.hear(amplitude: 8_000, count: 100, explained: nil)   // over three times Apple's level, for 2 s
        feed.guardian.userPartial("wait stop", atNs: feed.nowNs)
        feed.hear(amplitude: 8_000, count: 25, explained: nil)
        #expect(feed.guardian.hearsSound)
        #expect(feed.firstBargeIn == nil, "decisions: \(feed.decisions)")
    }

    @Test func `a relay that transcribes the user keeps the text guard: the user's sound alone does not stop the answer`() {
        var feed = Self.answering()
        feed.guardian.userPartial("the answer", atNs: feed.nowNs)
        feed.guardian.assistantSaid("the answer")
        feed.hear(amplitude: 3_000, count: 40, explained: 0.1)
        #expect(feed.firstBargeIn == nil)
        feed.guardian.userPartial("wait stop", atNs: feed.nowNs)
        feed.hear(amplitude: 3_000, count: 1, explained: 0.1)
        #expect(feed.firstBargeIn != nil)
    }
}
