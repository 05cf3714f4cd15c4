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
    let rate: Int
    /// Samples written so far.
    private(set) var written = 0
    /// When sample 0 was heard (on the monotonic clock), once the server has said.
    private(set) var originNs: UInt64?

    /// Once the stream has played this long its placement has settled, and only an underrun (a real gap in
    /// the sound, which the server reports) moves it again. The server's estimate alone wanders while the sound
    /// does not: 3 ms steps every half second on PulseAudio's loopback, and on PipeWire's Pulse server an
    /// interpolated stream time that drifts by up to 20 ms and more and then snaps back (0.3.65). Each move
    /// shifted the reference under a canceller converged on it: a 20 ms move on PipeWire left the echo 17 ms
    /// after its reference, outside the canceller's window, for the rest of the reply.
    static let settledAfterUsec: pa_usec_t = 300_000
    /// While the stream starts (or restarts after an underrun), moves smaller than this are the estimate's
    /// jitter, not the stream's.
    static let startingMoveNs: UInt64 = 3_000_000
    /// The stream time from which the placement holds: `settledAfterUsec` into the stream, and as long again
    /// after an underrun (the first estimate after one sets it).
    private var settledFromUsec: pa_usec_t? = settledAfterUsec

    init(rate: Int) {
        self.rate = rate
    }

    /// The server reported an underrun: the stream stood still for a while, so the next estimates place it again.
    mutating func underran() {
        settledFromUsec = nil
    }

    mutating func wrote(_ count: Int) {
        written += count
    }

    /// Takes the server's latest estimate: `playedUsec` of the stream heard by `nowNs`. The origin follows
    /// it while the stream starts and after an underrun, then holds; returns whether it moved.
    @discardableResult
    mutating func place(nowNs: UInt64, playedUsec: pa_usec_t) -> Bool {
        let estimate = nowNs &- UInt64(playedUsec) * 1000
        let settledFrom = settledFromUsec ?? playedUsec + Self.settledAfterUsec
        settledFromUsec = settledFrom
        if let originNs {
            guard playedUsec < settledFrom, (estimate > originNs ? estimate - originNs : originNs - estimate) > Self.startingMoveNs
            else { return false }
        }
        originNs = estimate
        return true
    }

    /// When sample `index` of the stream is heard; nil before the first estimate.
    func heardNs(ofSample index: Int) -> UInt64? {
        originNs.map { $0 + UInt64(index) * 1_000_000_000 / UInt64(rate) }
    }

    /// How many samples have been heard after `playedUsec` of the stream.
    func heardSamples(playedUsec: pa_usec_t) -> Int {
        Int(UInt64(playedUsec) * UInt64(rate) / 1_000_000)
    }
}
