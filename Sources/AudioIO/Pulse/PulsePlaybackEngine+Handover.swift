import CPulse

/// `PulsePlaybackEngine` handing a sound to a stream that idles: the sound starts a few milliseconds after the
/// server's read position (and where the echo canceller has yet to read the reference: `rewriteStart`), written over
/// the silence the stream holds, rather than behind it, and goes on the echo reference at once. Why: an idle stream
/// keeps its queue full of silence (`PlaybackBufferPlan`: up to 160 ms, so that a late refill leaves no gap), and a
/// reply's next sentence (or a reply within `idleSeconds` of the last) would otherwise wait for all of it. The server
/// rewrites for us as for a level change (`PulsePlaybackEngine+Level`). Confined to the loop as the engine is.
extension PulsePlaybackEngine {
    /// Asks where the server reads, for the sound just handed to the idle stream. Without an answer the sound is
    /// written behind the queued silence, as the server asks for more.
    func startOverQueuedSilence() {
        guard let playing = current, playing.sound != nil else { return }
        startPending = generation
        let me = Unmanaged.passUnretained(self).toOpaque()
        let op = pa_stream_update_timing_info(playing.stream, { s, success, userdata in
            guard let s, let userdata else { return }
            Unmanaged<PulsePlaybackEngine>.fromOpaque(userdata).takeUnretainedValue().startPositionKnown(s, success: success != 0)
        }, me)
        if let op { pa_operation_unref(op) } else { startPending = nil }
    }

    private func startPositionKnown(_ s: OpaquePointer, success: Bool) {
        guard startPending == generation else { return }
        startPending = nil
        guard success, var playing = current, playing.stream == s, var sound = playing.sound, sound.written == 0,
            let info = pa_stream_get_timing_info(s)?.pointee, info.read_index_corrupt == 0
        else { return }
        let rate = playing.timeline.rate
        let read = Int(info.read_index / Int64(MemoryLayout<Int16>.size))
        let from = max(0, rewriteStart(read: read, playing))
        let queued = playing.timeline.written - from
        guard queued > 0 else { return }
        sound.startIndex = from
        gain.startSound()
        let count = min(queued, sound.samples.count)
        writeSound(s, &sound, count: count, padding: queued - count, offsetBytes: -Int64(queued * MemoryLayout<Int16>.size), rate: rate)
        // On the reference at once, not at the server's next request (up to `minreq` later, by when the canceller
        // may have read past the sound's start).
        if let echoReference, let reference = sound.reference, let start = playing.timeline.heardNs(ofSample: from) {
            echoReference.schedule(reference, at: start)
            sound.referenceStartNs = start
        }
        playing.sound = sound
        current = playing
    }
}
