/// Tells the residual echo suppressor when a new sound (a reply's next sentence) is about to reach the
/// frames being cleaned, so it learns the canceller's attenuation afresh for it.
///
/// A sound is scheduled on the reference when its stream starts playing, which can be after the capture's
/// cursor has already read past the sound's start: `EchoAligner` moves the cursor up to hundreds of
/// milliseconds ahead of the capture's own clock. Looking only ahead of the cursor for a sound's start then
/// never sees that sound begin (on the loopback the next sentence's residual went unchecked and became
/// words). So each sound the reference counts is remembered until the cursor has passed its start.
struct SoundOnsetWatch {
    /// A sound already scheduled when watching starts counts as new: its start may still be ahead.
    private var soundsSeen = 0
    private var pendingStartNs: UInt64?

    /// Whether a new sound starts within `lookAheadNs` after `start` (the frame's first reference sample),
    /// or started before it unseen. `latest` is `EchoReference.latestSound()`.
    mutating func soundStarting(near start: UInt64, latest: (count: Int, startNs: UInt64), lookAheadNs: UInt64) -> Bool {
        if latest.count != soundsSeen {
            soundsSeen = latest.count
            pendingStartNs = latest.startNs
        }
        guard let onset = pendingStartNs, start + lookAheadNs >= onset else { return false }
        if start >= onset { pendingStartNs = nil }
        return true
    }
}
