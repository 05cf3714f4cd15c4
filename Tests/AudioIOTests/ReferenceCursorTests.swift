@testable import AudioIO
import Testing

/// Where the capture reads the echo reference, as the frames' timestamps and the sound fed decide it.
struct ReferenceCursorTests {
    static let frameNs = UInt64(AudioFrame.durationMs) * 1_000_000
    static let silence = [Int16](repeating: 0, count: AudioFrame.samplesPerFrame)
    static let sound = [Int16](repeating: 900, count: AudioFrame.samplesPerFrame)

    /// Frame `sequence` of a capture whose true frame times start at 10 s, stamped `earlyNs` early.
    static func frame(_ sequence: UInt64, earlyNs: UInt64 = 0) -> AudioFrame {
        AudioFrame(sequence: sequence, captureTimeNs: 10_000_000_000 + sequence * frameNs - earlyNs, samples: silence)
    }

    /// Where a frame stamped on time is read: its first sample's time plus the lead.
    static func onTime(_ sequence: UInt64) -> UInt64 {
        var fresh = ReferenceCursor()
        return fresh.start(of: frame(sequence))
    }

    /// A capture stream's first second stamped early (a PulseAudio monitor reports the latency of what the sink had
    /// already rendered when it connected), then on time: the reads follow the step while no sound has been fed, so
    /// a reply starting later is read where its echo is. Before, steps under 250 ms were kept for the session and
    /// the reply's echo came that much before its reference.
    @Test(arguments: [60_000_000, 200_400_000, 244_800_000] as [UInt64])
    func `before any sound the reads follow the frames' times out of a stepped start`(earlyNs: UInt64) {
        var cursor = ReferenceCursor()
        for sequence in 0..<50 as Range<UInt64> {
            _ = cursor.start(of: Self.frame(sequence, earlyNs: earlyNs))
            cursor.fed(Self.silence)
        }
        var last: UInt64 = 0
        for sequence in 50..<250 as Range<UInt64> {
            last = cursor.start(of: Self.frame(sequence))
            cursor.fed(Self.silence)
        }
        #expect(last == Self.onTime(249), "read \(Int64(last) - Int64(Self.onTime(249))) ns off its frame's time")
    }

    /// A step under the starting bound (PulseAudio's monitor steps by as little as 20 ms), then on time: once the
    /// frames agree on it the reads follow, so a reply starting later has its echo where the lead places it, not
    /// nearer its reference than the canceller's window (recorded sessions began replies with the echo -1 to 14 ms
    /// after its reference, and the aligner moved it at once). Before, such a step was kept for the session.
    @Test(arguments: [20_000_000, 12_000_000, 29_000_000] as [UInt64])
    func `before any sound the reads follow a step under the starting bound`(earlyNs: UInt64) {
        var cursor = ReferenceCursor()
        for sequence in 0..<50 as Range<UInt64> {
            _ = cursor.start(of: Self.frame(sequence, earlyNs: earlyNs))
            cursor.fed(Self.silence)
        }
        var last: UInt64 = 0
        for sequence in 50..<100 as Range<UInt64> {
            // Jitter on every third frame, under the bound: the step is followed all the same, and only it.
            last = cursor.start(of: Self.frame(sequence, earlyNs: sequence % 3 == 0 ? 25_000_000 : 0))
            cursor.fed(Self.silence)
        }
        #expect(last == Self.onTime(99), "read \(Int64(last) - Int64(Self.onTime(99))) ns off its frame's time")
    }

    /// A step to earlier times under the bound is not the early stamps' step and leaves the reads where they are
    /// (followed, it put the echo of replies on PipeWire's Pulse server under the canceller's window).
    @Test func `before any sound a step to earlier times under the starting bound moves nothing`() {
        var cursor = ReferenceCursor()
        let first = cursor.start(of: Self.frame(0))
        var last: UInt64 = 0
        for sequence in 1..<50 as Range<UInt64> {
            last = cursor.start(of: Self.frame(sequence, earlyNs: 20_000_000))
            cursor.fed(Self.silence)
        }
        #expect(last == first + 49 * Self.frameNs)
    }

    /// The frames' jitter moves nothing before sound either: the reads stay one continuous signal.
    @Test func `before any sound jitter under the starting bound keeps the reads continuous`() {
        var cursor = ReferenceCursor()
        let first = cursor.start(of: Self.frame(0))
        let jittered = cursor.start(of: Self.frame(1, earlyNs: 25_000_000))
        #expect(jittered == first + Self.frameNs)
    }

    /// Once the canceller was fed sound it has converged on the reads: a disagreement under `cursorJumpNs` (the
    /// capture's drift and jitter, put back by the aligner from the signals) leaves them where they are.
    @Test func `once sound was fed a disagreement under the jump bound does not move the reads`() {
        var cursor = ReferenceCursor()
        var previous = cursor.start(of: Self.frame(0))
        cursor.fed(Self.sound)
        #expect(cursor.fedSound)
        for sequence in 1..<50 as Range<UInt64> {
            let start = cursor.start(of: Self.frame(sequence, earlyNs: 200_000_000))
            #expect(start == previous + Self.frameNs)
            previous = start
        }
        // A device change without an event (over the bound) still places them again.
        #expect(cursor.start(of: Self.frame(50, earlyNs: 400_000_000)) == Self.onTime(50) - 400_000_000)
    }

    /// The aligner moved the reads from the signals: sound was there, so the timestamps no longer move them.
    @Test func `after the aligner's move the reads hold their place`() {
        var cursor = ReferenceCursor()
        _ = cursor.start(of: Self.frame(0))
        cursor.move(by: 40_000_000)
        #expect(cursor.fedSound)
        #expect(cursor.start(of: Self.frame(1)) == Self.onTime(1) + 40_000_000)
    }
}
