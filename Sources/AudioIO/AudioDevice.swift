/// What a capture device reports. Frames keep their sequence across interruptions, so a consumer can
/// tell how much audio a device loss cost.
package enum CaptureEvent: Sendable, Equatable {
    case frame(AudioFrame)
    /// The sound server went away or the device vanished; capture is trying to resume by itself.
    case interrupted(reason: String)
    /// Capture is running again, on this device: the default one while the chosen device is gone, the
    /// chosen one again once it is back.
    case resumed(device: String)
    /// A finite source (a file) has delivered everything, including its trailing silence.
    case finished
}

/// A microphone: PulseAudio, or a file standing in for one. Implementations are actors or confine their
/// C handles to one thread; `start()` may be called again after `stop()`.
package protocol AudioCaptureDevice: Sendable {
    /// Starts capture; 20 ms frames and device events arrive on the stream until `stop()`.
    func start() async throws -> AsyncStream<CaptureEvent>
    /// Stops capture and finishes the stream. Idempotent.
    func stop() async
}

/// How a `play` call ended.
package enum PlaybackOutcome: Sendable, Equatable {
    case completed
    /// `stop()` cut it short; the rest was discarded, not left to drain.
    case stopped
}

/// A speaker: PulseAudio, or a WAV file recording what would have been played.
package protocol AudioPlaybackDevice: Sendable {
    /// Plays mono PCM at the buffer's own rate; returns when it has been heard, or was stopped.
    func play(_ buffer: PCMBuffer) async throws -> PlaybackOutcome
    /// Silences playback at once (within 50 ms): buffered audio is flushed, not drained. Resets the gain to 1.
    func stop() async
    /// Plays what is still to come at `gain` (1: as given) until it is set again or `stop()`, ramped
    /// (`PlaybackGain`), with any echo reference scaled alike: the Talk loop lowers a reply while the user may
    /// be cutting in. A speaker with a buffer of its own either rewrites what it holds (`PulsePlayback`: from a few
    /// milliseconds after where the server reads) or lets it play as it was.
    func setGain(_ gain: Float) async
    /// Releases the device (the sound-server connection, the file). Idempotent.
    func close() async
}
