import Synchronization

/// What the speaker is playing, laid out on the monotonic clock at 16 kHz: the far-end reference an echo
/// canceller needs. The playback side schedules each sound as it hands it over and cuts it where it was
/// stopped; the capture side reads the stretch that was playing while a frame was captured. Either side may
/// run on any thread.
package final class EchoReference: Sendable {
    package static let sampleRate = AudioFrame.sampleRate
    static let nanosecondsPerSample: UInt64 = 1_000_000_000 / UInt64(sampleRate)
    /// How much played audio is kept for a capture that runs late.
    private let historyNs: UInt64

    private struct Segment {
        var startNs: UInt64
        var samples: [Int16]
        var endNs: UInt64 { startNs + UInt64(samples.count) * EchoReference.nanosecondsPerSample }
    }

    private let segments = Mutex<[Segment]>([])
    private let gapCount = Atomic<Int>(0)
    private let readEnd = Atomic<UInt64>(0)

    /// Where the furthest stretch read so far ends (0 before any read): a canceller reads each stretch once, so a
    /// sound scheduled or scaled before this point is not what it heard (`PulsePlaybackEngine.rewriteStart`).
    package var readUntilNs: UInt64 { readEnd.load(ordering: .relaxed) }

    /// How many gaps (playback underruns) the speaker's sound has had: the echo after one may sit a few samples
    /// off where the reference places it, which the capture side's aligner measures again (`EchoAligner`).
    package var gaps: Int { gapCount.load(ordering: .relaxed) }

    /// Records that what the speaker plays has a gap the reference was placed after by an estimate, not to the sample.
    package func playbackHadGap() {
        gapCount.wrappingAdd(1, ordering: .relaxed)
    }

    /// - Parameter historySeconds: how long played audio is kept after it ended (2 s is ample for a capture
    ///   running late; a test that reads the reference after a whole run keeps it longer).
    package init(historySeconds: Double = 2) {
        historyNs = UInt64(historySeconds * 1_000_000_000)
    }

    /// Records that `samples` (16 kHz mono) are heard from `startNs` on. A sound replaces whatever was
    /// scheduled after its start, as a new `play` replaces the sound in progress (or as the sound in progress,
    /// placed again where the server now says it is heard, replaces itself).
    package func schedule(_ samples: [Int16], at startNs: UInt64) {
        segments.withLock { list in
            Self.cut(&list, at: startNs)
            list.removeAll { $0.endNs + historyNs < startNs }
            if !samples.isEmpty { list.append(Segment(startNs: startNs, samples: samples)) }
        }
    }

    /// Records that nothing is heard from `ns` on (playback was stopped, or failed).
    package func cut(at ns: UInt64) {
        segments.withLock { Self.cut(&$0, at: ns) }
    }

    /// The `count` samples heard from `startNs` on, silence where nothing was playing. Forgets what
    /// ended long before `startNs`.
    package func samples(from startNs: UInt64, count: Int) -> [Int16] {
        var out = [Int16](repeating: 0, count: count)
        let step = Int64(Self.nanosecondsPerSample)
        _ = readEnd.max(startNs + UInt64(max(0, count)) * Self.nanosecondsPerSample, ordering: .relaxed)
        segments.withLock { list in
            list.removeAll { $0.endNs + historyNs < startNs }
            for segment in list {
                // Index into the segment of the window's first sample, rounded to the nearest sample.
                let offset = Int64((Double(Int64(bitPattern: startNs &- segment.startNs)) / Double(step)).rounded())
                let first = max(0, -offset)
                let last = min(Int64(count), Int64(segment.samples.count) - offset)
                guard first < last else { continue }
                for i in Int(first)..<Int(last) { out[i] = segment.samples[Int(offset) + i] }
            }
        }
        return out
    }

    private static func cut(_ list: inout [Segment], at ns: UInt64) {
        list = list.compactMap { segment in
            if segment.startNs >= ns { return nil }
            guard segment.endNs > ns else { return segment }
            var kept = segment
            kept.samples.removeLast(Int((segment.endNs - ns) / nanosecondsPerSample))
            return kept
        }
    }
}
