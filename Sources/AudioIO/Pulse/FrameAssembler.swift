/// Cuts captured 16 kHz mono samples into numbered 20 ms `AudioFrame`s, dating each frame from the capture
/// time of the newest sample appended.
struct FrameAssembler {
    private var pending: [Int16] = []
    /// The sequence number the next frame gets.
    private(set) var nextSequence: UInt64 = 0

    private static let nanosecondsPerSample = UInt64(1_000_000_000 / AudioFrame.sampleRate)

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        pending.append(contentsOf: bytes.bindMemory(to: Int16.self))
    }

    mutating func appendSilence(samples: Int) {
        pending.append(contentsOf: repeatElement(0, count: samples))
    }

    /// Every complete frame so far. `newestSampleTimeNs` is when the last appended sample was captured.
    mutating func takeFrames(newestSampleTimeNs: UInt64) -> [AudioFrame] {
        let count = pending.count / AudioFrame.samplesPerFrame
        guard count > 0 else { return [] }
        var frames: [AudioFrame] = []
        frames.reserveCapacity(count)
        for k in 0..<count {
            let end = (k + 1) * AudioFrame.samplesPerFrame
            let samplesAfter = UInt64(pending.count - end)
            frames.append(
                AudioFrame(
                    sequence: nextSequence,
                    captureTimeNs: newestSampleTimeNs &- samplesAfter * Self.nanosecondsPerSample,
                    samples: Array(pending[(end - AudioFrame.samplesPerFrame)..<end])))
            nextSequence += 1
        }
        pending.removeFirst(count * AudioFrame.samplesPerFrame)
        return frames
    }

    /// Drops a partial frame that would otherwise be glued to audio from after an interruption, and moves
    /// the sequence on by `skippedFrames` so the numbers still say how much time passed.
    mutating func restart(skippedFrames: UInt64) {
        pending.removeAll(keepingCapacity: true)
        nextSequence += skippedFrames
    }
}
