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
    /// The stream time (µs) from which the placement holds: `settledAfterUsec` into the stream, and as long again
    /// after the first estimate that follows an underrun.
    private var settlesAtUsec = pa_usec_t(Tuning.settledAfterUsec)
    /// The server reported an underrun that the estimates have not been taken after yet.
    private var gapReported = false
    /// Underruns whose gap is not measured yet: how many, and where the stream was placed before the first.
    private var unmeasured: (count: Int, originNs: UInt64?)?
    /// The last gap measured (`takeMeasuredGap`).
    private var measured: Gap?

    /// What one or more underruns in a row cost: the stream time stands still while the sink has nothing to play, so
    /// the stream, once it has settled again, is heard `lengthNs` later than it was placed before (nil: it was not
    /// placed yet). PipeWire's estimates may miss a quantum of the silence it inserted (`EchoTuning.Placement`).
    struct Gap: Equatable {
        var underruns: Int
        var lengthNs: Int64?
    }

    /// Whether a stream placed at `placed` moves to the estimate `start`, `playedUsec` into it (no underrun since it
    /// started).
    static func movesReference(from placed: UInt64, to start: UInt64, playedUsec: pa_usec_t) -> Bool {
        movesReference(from: placed, to: start, settled: playedUsec >= Tuning.settledAfterUsec)
    }

    /// Whether a placement moves to the estimate `start`: while it is not `settled`, for more than the estimate's
    /// jitter; once settled, only beyond what the echo aligner puts back from the signals (`settledMoveNs`).
    static func movesReference(from placed: UInt64, to start: UInt64, settled: Bool) -> Bool {
        let bound = settled ? Tuning.settledMoveNs : Tuning.startingMoveNs
        return (start > placed ? start - placed : placed - start) > bound
    }

    /// The server reported an underrun: the sound has a gap, and the estimates from the next one on place the
    /// stream again (as while it started) until it has played `settledAfterUsec` more.
    mutating func underran() {
        gapReported = true
        unmeasured = (count: (unmeasured?.count ?? 0) + 1, originNs: unmeasured == nil ? originNs : unmeasured?.originNs)
    }

    /// The gap of the underruns since the last call, once the stream has settled after them (nil before).
    mutating func takeMeasuredGap() -> Gap? {
        defer { measured = nil }
        return measured
    }

    /// Underruns whose gap was not measured (the stream closes before it settled again): their count.
    var unmeasuredUnderruns: Int { unmeasured?.count ?? 0 }

    init(rate: Int) {
        self.rate = rate
    }

    mutating func wrote(_ count: Int) {
        written += count
    }

    /// Takes the server's latest estimate: `playedUsec` of the stream heard by `nowNs`. The origin follows
    /// it only as far as `movesReference` allows (freely while the stream starts and after an underrun, then only
    /// for a move beyond what the echo aligner puts back from the signals); returns whether it moved.
    @discardableResult
    mutating func place(nowNs: UInt64, playedUsec: pa_usec_t) -> Bool {
        guard Self.isStreamTime(playedUsec, nowNs: nowNs) else { return false }
        if gapReported {
            gapReported = false
            settlesAtUsec = playedUsec + pa_usec_t(Tuning.settledAfterUsec)
        }
        let estimate = nowNs - UInt64(playedUsec) * 1000
        let settled = playedUsec >= settlesAtUsec
        defer { if settled { measureGap() } }
        if let originNs, !Self.movesReference(from: originNs, to: estimate, settled: settled) {
            return false
        }
        originNs = estimate
        return true
    }

    private mutating func measureGap() {
        guard let gap = unmeasured, !gapReported else { return }
        unmeasured = nil
        let length: Int64? = if let before = gap.originNs, let after = originNs { Int64(bitPattern: after &- before) } else { nil }
        measured = Gap(underruns: gap.count, lengthNs: length)
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

    /// The first sample of the stream heard at or after `ns`; nil before the first estimate.
    func firstSample(heardAtOrAfter ns: UInt64) -> Int? {
        originNs.map { origin in
            ns <= origin ? 0 : Int(((ns - origin) * UInt64(rate) + 999_999_999) / 1_000_000_000)
        }
    }

    /// How many samples have been heard after `playedUsec` of the stream (a time `isStreamTime` accepts).
    func heardSamples(playedUsec: pa_usec_t) -> Int {
        Int(UInt64(playedUsec) * UInt64(rate) / 1_000_000)
    }
}
