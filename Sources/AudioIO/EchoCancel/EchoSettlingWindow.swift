/// The frames after the reference's placement changed under the echo: the playback side announced a gap in what the
/// speaker played (`EchoReference.playbackHadGap`), or the aligner moved the reference (`EchoAligner`). Until the
/// placement is right again the echo may sit tens of ms off its reference (the stream placed again from a timing
/// estimate, the aligner's correction still to come), and the frame-by-frame measure of how much of the capture the
/// reply explains (`EchoExplanation`) reads its leak as sound the reply does not explain: barge-in must not take those
/// frames for the user's (`AudioFrame.echoSettling`, `BargeInEvidenceMeter`).
package struct EchoSettlingWindow: Sendable, Equatable {
    /// Its tuning: `EchoTuning.Settling`.
    typealias Tuning = EchoTuning.Settling

    /// The window's length in frames (`Tuning.windowFrames`; a replay may try others).
    let windowFrames: Int
    /// Frames left in the window; 0: settled.
    private var framesLeft = 0

    /// `windowMs`: the window's length (nil: `Tuning.windowMs`).
    package init(windowMs: Int? = nil) {
        windowFrames = max(0, (windowMs ?? Tuning.windowMs) / AudioFrame.durationMs)
    }

    /// The placement changed before the next frame: a gap was announced, or the reference moved.
    package mutating func placementChanged() {
        framesLeft = windowFrames
    }

    /// Takes the next frame: whether it lies within the window.
    package mutating func nextFrame() -> Bool {
        guard framesLeft > 0 else { return false }
        framesLeft -= 1
        return true
    }

    /// Which of `frames` frames lie within the window of a change before frame `i` (`changedBefore(i)`): what a live
    /// capture stamped them with, rebuilt for a recording.
    package static func frames(_ frames: Int, windowMs: Int? = nil, changedBefore: (Int) -> Bool) -> [Bool] {
        var window = EchoSettlingWindow(windowMs: windowMs)
        return (0..<frames).map { i in
            if changedBefore(i) { window.placementChanged() }
            return window.nextFrame()
        }
    }
}

extension EchoTuning {
    /// After the reference's placement changed (`EchoSettlingWindow`).
    enum Settling {
        /// 800 ms (40 frames): the aligner waits as long after an announced gap before it measures the lag again
        /// (`Alignment.gapSettleSamples`: half a second of capture holding echo of sound placed after the gap, and the
        /// 300 ms the stream's placement takes to settle after an underrun, `Placement.settledAfterUsec`), so the
        /// echo may stay off its reference that long. In the recorded loopback sessions the leak after a gap came
        /// 80 to 900 ms after it (see the commit that set it for the replayed figures).
        static let windowMs = 800
    }
}
