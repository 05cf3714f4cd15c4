import Testing

@testable import AudioIO

/// When the playback moves a sound's echo reference to the server's newer estimate: freely while the stream
/// starts (the stream waiting to start moves it by tens of milliseconds), and once it has played 300 ms only
/// after the server reported an underrun (a real gap in the sound). The estimate alone wanders while the sound
/// does not: a few milliseconds on PulseAudio, up to 20 ms and more on PipeWire's Pulse server, whose
/// interpolated stream time drifts and snaps back; each move shifted the reference under a converged canceller.
@Suite struct ReferencePlacementRuleTests {
    static let ms: UInt64 = 1_000_000
    static let startNs: UInt64 = 10_000 * ms

    /// A timeline whose first estimate put sample 0 at `startNs`, `playedUsec` into the stream.
    static func timeline(playedUsec: UInt64 = 0) -> PlaybackTimeline {
        var timeline = PlaybackTimeline(rate: 16_000)
        timeline.place(nowNs: startNs + playedUsec * 1000, playedUsec: playedUsec)
        return timeline
    }

    @Test(arguments: [(UInt64(2), false), (4, true), (15, true)])
    func `while a stream starts its reference follows moves over 3 ms`(movedMs: UInt64, moves: Bool) {
        for sign in [1, -1] {
            var timeline = Self.timeline()
            let estimate = sign > 0 ? Self.startNs + movedMs * Self.ms : Self.startNs - movedMs * Self.ms
            let moved = timeline.place(nowNs: estimate + 100_000_000, playedUsec: 100_000)
            #expect(moved == moves)
        }
    }

    @Test(arguments: [UInt64(3), 19, 25, 80])
    func `once it has played 300 ms the estimate's wander does not move it`(movedMs: UInt64) {
        for sign in [1, -1] {
            var timeline = Self.timeline()
            let estimate = sign > 0 ? Self.startNs + movedMs * Self.ms : Self.startNs - movedMs * Self.ms
            let moved = timeline.place(nowNs: estimate + 1_290_000_000, playedUsec: 1_290_000)
            #expect(!moved)
            #expect(timeline.heardNs(ofSample: 16_000) == Self.startNs + 1_000 * Self.ms)
        }
    }

    @Test func `after an underrun the reference follows the gap, then holds again`() {
        var timeline = Self.timeline()
        timeline.underran()
        // The stream stood still for 40 ms: its sample 0 is now heard 40 ms later than placed.
        let followed = timeline.place(nowNs: Self.startNs + 40 * Self.ms + 1_290_000_000, playedUsec: 1_290_000)
        #expect(followed)
        #expect(timeline.heardNs(ofSample: 0) == Self.startNs + 40 * Self.ms)
        // The server's estimate settles over the next moments, then the placement holds again.
        let settling = timeline.place(nowNs: Self.startNs + 45 * Self.ms + 1_400_000_000, playedUsec: 1_400_000)
        #expect(settling)
        let held = timeline.place(nowNs: Self.startNs + 70 * Self.ms + 1_700_000_000, playedUsec: 1_700_000)
        #expect(!held)
        #expect(timeline.heardNs(ofSample: 0) == Self.startNs + 45 * Self.ms)
    }
}
