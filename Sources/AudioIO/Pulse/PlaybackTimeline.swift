import CPulse

/// One playback stream's sample clock: how many samples (sounds and the silence between them) have been
/// written, and when on the monotonic clock its first sample was heard. A sound's place on the echo
/// reference comes from its position in the stream, not from a fresh timing estimate per sound.
///
/// Why: the server's estimate of when a new stream's sound is heard differs from sound to sound by up to
/// 1.4 ms (measured on the loopback: 2 to 22 samples at 16 kHz between a reply's sentences). A linear echo
/// filter converged on one sentence is then wrong for the next: at such a shift it removes nothing above a
/// few hundred hertz, and each sentence's first half second leaked through the canceller. Sounds written
/// one after another into one stream keep one offset to their echo, to the sample.
struct PlaybackTimeline {
    /// Its tuning: `EchoTuning.Placement`.
    typealias Tuning = EchoTuning.Placement
    let rate: Int
    /// Samples written so far.
    private(set) var written = 0
    /// When sample 0 was heard (on the monotonic clock), once the server has said.
    private(set) var originNs: UInt64?

    /// Whether a stream placed at `placed` moves to the estimate `start`, `playedUsec` into it.
    static func movesReference(from placed: UInt64, to start: UInt64, playedUsec: pa_usec_t) -> Bool {
        let bound = playedUsec >= Tuning.settledAfterUsec ? Tuning.settledMoveNs : Tuning.startingMoveNs
        return (start > placed ? start - placed : placed - start) > bound
    }

    init(rate: Int) {
        self.rate = rate
    }

    mutating func wrote(_ count: Int) {
        written += count
    }

    /// Takes the server's latest estimate: `playedUsec` of the stream heard by `nowNs`. The origin follows
    /// it only as far as `movesReference` allows (freely while the stream starts, then
    /// only for an underrun's gap); returns whether it moved.
    @discardableResult
    mutating func place(nowNs: UInt64, playedUsec: pa_usec_t) -> Bool {
        guard Self.isStreamTime(playedUsec, nowNs: nowNs) else { return false }
        let estimate = nowNs - UInt64(playedUsec) * 1000
        if let originNs, !Self.movesReference(from: originNs, to: estimate, playedUsec: playedUsec) {
            return false
        }
        originNs = estimate
        return true
    }

    /// Whether the server's stream time is one: no longer than the monotonic clock has run. Under load the
    /// server's interpolated stream time now and then comes back near 2^64 µs (0xfffe14ccdffc5800, a negative time
    /// read as unsigned, in the core of a test process that died of SIGILL); placing a stream from it overflowed.
    /// Such a report places nothing and plays nothing out.
    static func isStreamTime(_ playedUsec: pa_usec_t, nowNs: UInt64) -> Bool {
        UInt64(playedUsec) <= nowNs / 1000
    }

    /// When sample `index` of the stream is heard; nil before the first estimate.
    func heardNs(ofSample index: Int) -> UInt64? {
        originNs.map { $0 + UInt64(index) * 1_000_000_000 / UInt64(rate) }
    }

    /// How many samples have been heard after `playedUsec` of the stream (a time `isStreamTime` accepts).
    func heardSamples(playedUsec: pa_usec_t) -> Int {
        Int(UInt64(playedUsec) * UInt64(rate) / 1_000_000)
    }
}
