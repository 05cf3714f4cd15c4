/// Where in the reference each captured frame's echo reference starts. Reads follow each other sample for
/// sample, so the canceller sees one continuous far-end signal; the frames' timestamps only place the
/// first read, and a later one when they disagree with the cursor by more than a bound or the frame sequence has
/// a gap (an outage). Finer placement comes from the signals (`EchoAligner`). The first read is `cursorLeadNs`
/// ahead of the frame's time: the sound server's start-up latency then still leaves the echo after its reference,
/// where the canceller can find it.
///
/// The bound is small until the reads have fed the canceller any sound (`cursorStartingJumpNs`), then large
/// (`cursorJumpNs`). A capture stream's first frames are stamped early: on PulseAudio a sink's monitor reports,
/// for its first second, the latency of sound the sink had already rendered when the stream connected (up to a
/// few hundred ms) and then steps to the true one. Reads that kept the early place put every reply of the session
/// that far after its echo, the echo's onset unexplained until the aligner found it. Before any sound, moving the
/// reads costs nothing: no canceller has converged on them. A step to later times under the bound is followed too
/// once the frames' times have agreed on it for `cursorStartingSteadyFrames` (the median of their disagreements,
/// which one jittered frame does not move): kept, it left a reply's echo up to 30 ms nearer its reference than the
/// lead places it, under the canceller's window, and the aligner moved the reference 300 to 440 ms into the reply.
struct ReferenceCursor {
    /// Its tuning: `EchoTuning.Placement`.
    typealias Tuning = EchoTuning.Placement
    private var next: (sequence: UInt64, start: Int64)?
    /// Whether the reads so far fed the canceller any sound (or the aligner moved them, which needs sound).
    private(set) var fedSound = false
    /// Before any sound: how far (ns) each of the last frames' own times disagreed with the reads.
    private var disagreements: [Int64] = []

    mutating func start(of frame: AudioFrame) -> UInt64 {
        let span = Int64(frame.samples.count) * Int64(EchoReference.nanosecondsPerSample)
        // captureTimeNs stamps the frame's last sample.
        let own = Int64(frame.captureTimeNs) + Int64(EchoReference.nanosecondsPerSample) - span + Tuning.cursorLeadNs
        var start = own
        let bound = fedSound ? Tuning.cursorJumpNs : Tuning.cursorStartingJumpNs
        if let next, next.sequence == frame.sequence, abs(own - next.start) <= bound {
            start = next.start
            if !fedSound { start += steadyStep(own - next.start) }
        } else {
            disagreements.removeAll()
        }
        next = (frame.sequence &+ 1, start + span)
        return UInt64(max(0, start))
    }

    /// Before any sound, the step (ns) the last `cursorStartingSteadyFrames` frames' times agree on, once it is over
    /// `startingMoveNs` (their jitter) and later than the reads (the early stamps' step); 0 otherwise. A step to
    /// earlier times is not that one, and following it did harm: on PipeWire's Pulse server it put the echo of 4 of 20
    /// replies under 15 ms after its reference (the aligner moved 3), where main's reads had left none.
    private mutating func steadyStep(_ disagreement: Int64) -> Int64 {
        disagreements.append(disagreement)
        if disagreements.count > Tuning.cursorStartingSteadyFrames { disagreements.removeFirst() }
        guard disagreements.count == Tuning.cursorStartingSteadyFrames else { return 0 }
        let median = disagreements.sorted()[disagreements.count / 2]
        guard median > Int64(Tuning.startingMoveNs) else { return 0 }
        disagreements.removeAll()
        return median
    }

    /// The reference samples the last read gave the canceller: once any is sound, the reads hold their place.
    mutating func fed(_ far: [Int16]) {
        if !fedSound, far.contains(where: { $0 != 0 }) { fedSound = true }
    }

    /// Reads the reference `ns` later from the next frame on.
    mutating func move(by ns: Int64) {
        next?.start += ns
        fedSound = true
    }
}
