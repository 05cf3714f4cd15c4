import Testing

@testable import AudioIO

/// When the playback moves a sound's echo reference to the server's newer estimate: freely while the sound
/// starts (the stream waiting to start moves it by tens of milliseconds), and once it has played 300 ms only
/// for a move beyond what the echo aligner puts back from the signals, not for the estimate's wander or its
/// misreading of an underrun's gap, which threw a converged canceller off.
@Suite struct ReferencePlacementRuleTests {
    static let ms: UInt64 = 1_000_000
    static let placed: UInt64 = 10_000 * ms

    @Test(arguments: [(UInt64(2), false), (4, true), (15, true)])
    func `while a sound starts its reference follows moves over 3 ms`(movedMs: UInt64, moves: Bool) {
        #expect(PlaybackTimeline.movesReference(from: Self.placed, to: Self.placed + movedMs * Self.ms, playedUsec: 100_000) == moves)
        #expect(PlaybackTimeline.movesReference(from: Self.placed, to: Self.placed - movedMs * Self.ms, playedUsec: 100_000) == moves)
    }

    @Test(arguments: [(UInt64(3), false), (9, false), (19, false), (25, false), (80, false), (190, false), (250, true), (960, true)])
    func `once it has played 300 ms only a move over 200 ms moves it`(movedMs: UInt64, moves: Bool) {
        #expect(PlaybackTimeline.movesReference(from: Self.placed, to: Self.placed + movedMs * Self.ms, playedUsec: 1_290_000) == moves)
        #expect(PlaybackTimeline.movesReference(from: Self.placed, to: Self.placed - movedMs * Self.ms, playedUsec: 1_290_000) == moves)
    }

    /// The estimate's drift with no gap in the sound, as traced on the headless loopback under load (the estimate's
    /// origin minus the placed one, ms, a report every 100 ms here): PipeWire's Pulse server (0.3.65) drifted to
    /// +13.6 ms and another run to +20.05 ms; PulseAudio once to +20.08 ms. The sink's monitor showed the echo where
    /// it was. Followed, the 20 ms moves shifted the reference under the converged canceller (the loopback's ERLE
    /// fell to 14-35 dB while the aligner put it back); held, nothing moves.
    @Test(arguments: [
        [0.0, 4.1, 9.6, 13.2, 13.6, 13.6, 13.4],
        [0.0, 6.0, 14.0, 20.05, 19.8, 25.0],
        [0.0, -3.0, -12.0, -20.08, -35.0, -60.0],
    ])
    func `a settled stream holds its placement while the estimate drifts`(offsetsMs: [Double]) {
        var timeline = PlaybackTimeline(rate: 16_000)
        let origin = Self.place(&timeline, offsetsMs: offsetsMs, underrunBefore: nil)
        #expect(timeline.heardNs(ofSample: 0) == origin)
    }

    /// An underrun the server reports is a real gap: the estimates after it place the stream again, as while it
    /// started (PulseAudio's loopback under load: gaps of 26 to 56 ms, the estimate right to the sample), and the
    /// placement settles again 300 ms of stream later, so the drift after it is held again.
    @Test func `after a reported underrun the estimates place the gap`() {
        var timeline = PlaybackTimeline(rate: 16_000)
        // The gap (56 ms) shows from the fourth report on; the last ones drift 20.5 ms more, 400 ms and more after it.
        let origin = Self.place(&timeline, offsetsMs: [0, 0.2, 0.1, 56.0, 56.1, 55.9, 56.0, 76.5, 76.5], underrunBefore: 3)
        #expect(timeline.heardNs(ofSample: 0) == origin.map { $0 + 56 * Self.ms })
    }

    /// The log gives each underrun's length: how far the stream moved from where it was placed before the gap to
    /// where it settled after it (56 ms here, as long as the sink had nothing to play). Nothing before it settled,
    /// and each gap once.
    @Test func `an underrun's gap is measured once the stream settles after it`() {
        var timeline = PlaybackTimeline(rate: 16_000)
        _ = Self.place(&timeline, offsetsMs: [0, 0.2, 0.1, 56.0, 56.1], underrunBefore: 3)
        #expect(timeline.takeMeasuredGap() == nil, "measured before the stream played 300 ms after the gap")
        #expect(timeline.unmeasuredUnderruns == 1)
        for (i, offset) in [55.9, 56.0, 56.0].enumerated() {
            let playedUsec = UInt64(1_500_000 + i * 100_000)
            timeline.place(nowNs: UInt64(Int64(Self.placed + playedUsec * 1_000) + Int64(offset * 1e6)), playedUsec: playedUsec)
        }
        #expect(timeline.takeMeasuredGap() == PlaybackTimeline.Gap(underruns: 1, lengthNs: 56 * Int64(Self.ms)))
        #expect(timeline.takeMeasuredGap() == nil)
        #expect(timeline.unmeasuredUnderruns == 0)
    }

    /// A move beyond the aligner's reach (a machine stalled for most of a second, or a stream placed that far off
    /// while it started) is still followed.
    @Test func `a settled stream follows a move beyond the aligner's reach`() {
        var timeline = PlaybackTimeline(rate: 16_000)
        let origin = Self.place(&timeline, offsetsMs: [0, 0.1, 600.0], underrunBefore: nil)
        #expect(timeline.heardNs(ofSample: 0) == origin.map { $0 + 600 * Self.ms })
    }

    /// Places `timeline` at `placed` 0 µs into the stream, then feeds it estimates from 1 s of stream on, 100 ms
    /// apart, each `offsetsMs[i]` after that first origin; the underrun is reported before report `underrunBefore`.
    /// Returns the first origin.
    static func place(_ timeline: inout PlaybackTimeline, offsetsMs: [Double], underrunBefore: Int?) -> UInt64? {
        timeline.place(nowNs: placed, playedUsec: 0)
        let origin = timeline.heardNs(ofSample: 0)
        for (i, offset) in offsetsMs.enumerated() {
            if i == underrunBefore { timeline.underran() }
            let playedUsec = UInt64(1_000_000 + i * 100_000)
            let nowNs = UInt64(Int64(placed + playedUsec * 1_000) + Int64(offset * 1e6))
            timeline.place(nowNs: nowNs, playedUsec: playedUsec)
        }
        return origin
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
