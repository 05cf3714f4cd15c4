import Testing

@testable import AudioIO

/// When the playback moves a sound's echo reference to the server's newer estimate: freely while the sound
/// starts (the stream waiting to start moves it by tens of milliseconds), and once it has played 300 ms only
/// for a real gap, not for the estimate's few-millisecond wander that threw a converged canceller off.
@Suite struct ReferencePlacementRuleTests {
    static let ms: UInt64 = 1_000_000
    static let placed: UInt64 = 10_000 * ms

    @Test(arguments: [(UInt64(2), false), (4, true), (15, true)])
    func `while a sound starts its reference follows moves over 3 ms`(movedMs: UInt64, moves: Bool) {
        #expect(PlaybackTimeline.movesReference(from: Self.placed, to: Self.placed + movedMs * Self.ms, playedUsec: 100_000) == moves)
        #expect(PlaybackTimeline.movesReference(from: Self.placed, to: Self.placed - movedMs * Self.ms, playedUsec: 100_000) == moves)
    }

    @Test(arguments: [(UInt64(3), false), (9, false), (19, false), (25, true), (80, true)])
    func `once it has played 300 ms only a gap over 20 ms moves it`(movedMs: UInt64, moves: Bool) {
        #expect(PlaybackTimeline.movesReference(from: Self.placed, to: Self.placed + movedMs * Self.ms, playedUsec: 1_290_000) == moves)
        #expect(PlaybackTimeline.movesReference(from: Self.placed, to: Self.placed - movedMs * Self.ms, playedUsec: 1_290_000) == moves)
    }
}
