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

    /// PulseAudio's interpolated stream time now and then comes back beyond anything the clock has run under load:
    /// 0xfffe14ccdffc5800 µs (a negative time read as unsigned) in the core of a test process that died of SIGILL
    /// running the echo suites together. `now - played` overflowed and trapped in the playback thread; a time
    /// a few seconds beyond the clock wrapped the origin, and the next reference placed from it overflowed.
    /// Such a time is no estimate: the placement stays where it was, or unplaced.
    @Test(arguments: [0xfffe_14cc_dffc_5800, .max, 15_000_000] as [UInt64])
    func `a stream time longer than the clock has run is no estimate`(playedUsec: UInt64) {
        let nowNs = Self.placed  // the clock has run 10 s
        var fresh = PlaybackTimeline(rate: 16_000)
        let placedFresh = fresh.place(nowNs: nowNs, playedUsec: playedUsec)
        #expect(!placedFresh)
        #expect(fresh.heardNs(ofSample: 16_000) == nil)
        var placed = PlaybackTimeline(rate: 16_000)
        placed.place(nowNs: Self.placed, playedUsec: 0)
        let moved = placed.place(nowNs: nowNs + 100 * Self.ms, playedUsec: playedUsec)
        #expect(!moved)
        #expect(placed.heardNs(ofSample: 16_000) == Self.placed + 1_000 * Self.ms)
    }

    /// The capture's latency comes from the same interpolated stream time: a report near 2^64 µs is no latency (the
    /// frames keep the stream's last one) rather than a trap converting it to a signed figure or to nanoseconds.
    @Test(arguments: [0xfffe_14cc_dffc_5800, .max, 10_000_001] as [UInt64])
    func `a capture latency longer than any buffer is no estimate`(usec: UInt64) {
        #expect(PulseCaptureEngine.signedLatency(usec: usec, negative: false) == nil)
        #expect(PulseCaptureEngine.signedLatency(usec: usec, negative: true) == nil)
        #expect(PulseCaptureEngine.signedLatency(usec: 42_000, negative: true) == -42_000)
        #expect(PulseCaptureEngine.signedLatency(usec: 42_000, negative: false) == 42_000)
    }
}
