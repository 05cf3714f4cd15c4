import AudioIO
import Testing

@testable import TalkSession

/// The realtime relay's output queue holds what a Gateway sends within bounds, however it cuts it up.
@Suite struct RealtimeOutputQueueTests {
    static func queue() -> RealtimeOutputQueue { RealtimeOutputQueue(limits: .init()) }

    @Test func `tiny audio deltas count, so the 10 s cap cuts a flood of them`() {
        var q = Self.queue()
        // 20 samples at 24 kHz is under a millisecond each: counted in whole milliseconds, none counted at all.
        var outcome = RealtimeOutputQueue.Admission.queued
        var accepted = 0
        for _ in 0..<30_000 where outcome == .queued {
            outcome = q.appendAudio([Int16](repeating: 1, count: 20), turnId: "t")
            if outcome == .queued { accepted += 1 }
        }
        #expect(outcome == .overflow, "25 s of audio queued without a cut")
        #expect(accepted * 20 <= 10 * 24_000, "\(accepted * 20) samples held")
    }

    @Test func `marks and remembered turns are bounded, and so is a name`() {
        var q = Self.queue()
        var refused = 0
        for i in 0..<10_000 where q.appendMark("mark-\(i)") != .queued { refused += 1 }
        #expect(q.items.count <= RealtimeOutputQueue.Limits().maxQueuedMarks, "\(q.items.count) marks held")
        #expect(refused > 0)
        #expect(q.appendMark(String(repeating: "m", count: 100_000)) != .queued || q.items.count <= RealtimeOutputQueue.Limits().maxQueuedMarks)
        for i in 0..<10_000 { q.dropTurn("turn-\(i)") }
        #expect(q.droppedTurnCount <= RealtimeOutputQueue.Limits().maxRememberedTurns, "\(q.droppedTurnCount) turn ids held")
        #expect(q.isDropped("turn-9999"), "the newest cut turns are still known")
        q.dropTurn(String(repeating: "x", count: 1_000_000))
        #expect(q.droppedTurnCount <= RealtimeOutputQueue.Limits().maxRememberedTurns)
    }

    @Test func `a turn's audio plays as one buffer, behind the marks before it`() {
        var q = Self.queue()
        _ = q.appendMark("before")
        _ = q.appendAudio([1, 2], turnId: "a")
        _ = q.appendAudio([3], turnId: "a")
        _ = q.appendMark("end-a")
        _ = q.appendAudio([4], turnId: "b")
        guard case .mark("before")? = q.next() else { Issue.record("no mark first"); return }
        guard case .audio(let first, "a", let marks)? = q.next() else { Issue.record("no audio"); return }
        #expect(first.samples == [1, 2, 3])
        #expect(marks == ["end-a"])
        q.flushAudio()
        #expect(q.next() == nil)
    }

    /// Upstream's relay sends a mark behind each audio delta: they ride with the turn's audio, which stays one buffer.
    @Test func `a mark behind each delta leaves a turn's audio one buffer, carrying its marks in order`() {
        var q = Self.queue()
        for i in 0..<100 {
            #expect(q.appendAudio([Int16(i)], turnId: "a") == .queued)
            #expect(q.appendMark("audio-\(i)") == .queued, "mark \(i) refused")
        }
        _ = q.appendAudio([-1], turnId: "b")
        guard case .audio(let answer, "a", let marks)? = q.next() else { Issue.record("no audio"); return }
        #expect(answer.samples == (0..<100).map { Int16($0) })
        #expect(marks == (0..<100).map { "audio-\($0)" })
        guard case .audio(let next, "b", [])? = q.next() else { Issue.record("no second turn"); return }
        #expect(next.samples == [-1])
        #expect(q.next() == nil)
    }
}
