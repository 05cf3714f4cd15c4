import CPulse

/// `PulsePlaybackEngine`'s level (`setGain`): a change reaches the speaker a few milliseconds after the server's
/// read position rather than after the sound the server already holds. Why: the Talk loop lowers a reply the moment
/// the user may be cutting in, so that their first word meets less echo; applied only to samples not yet written, the
/// lowering reached the microphone after the server's buffer (the stream's queue: `PlaybackBufferPlan`), and the word met the
/// echo at full level. The server rewrites for us: a write `PA_SEEK_RELATIVE` at a negative offset replaces what the
/// stream holds from there on (PulseAudio and PipeWire's pulse server alike), and the echo reference is scaled from
/// the same sample, so the canceller sees the level the speaker plays. Confined to the loop as the engine is.
extension PulsePlaybackEngine {
    /// How far after the server's read position (as it answered) the rewrite starts: the server reads on while the
    /// answer and the rewrite travel, and a sample it read by then keeps the old level while the echo reference says
    /// the new one. PipeWire's pulse server reads a graph quantum at a time (1024 samples at 48 kHz, 21 ms) and
    /// reports where it read before the last one: at 10 ms the sink stepped 20 ms after its reference in 1 of 3 runs
    /// (PlaybackGainLoopbackTests); 25 ms covers the quantum and the round trip to a local server.
    static let rewriteMarginSeconds = 0.025
    /// How far ahead of what the echo canceller has read a rewritten stretch must be placed on the echo reference:
    /// the capture reads a 20 ms frame's reference at a time, and may read one more between the rewrite and its
    /// placement; 10 ms more for the reads' own jitter.
    static let referenceLeadSeconds = 0.03

    /// The first stream sample a rewrite may start at, with the server reading at stream sample `read`: after
    /// `rewriteMarginSeconds`, and no earlier than the first sample whose place on the echo reference the canceller
    /// has yet to read (`EchoReference.readUntilNs` plus `referenceLeadSeconds`). Why: the canceller reads each
    /// stretch of the reference once, as its frame comes in. Where the reference runs far ahead of the echo (on
    /// PipeWire about 110 ms), the sample the server plays 25 ms after its read position is already in the past
    /// of the reference, and a sound written there met the canceller with silence (or its level before the change)
    /// where it played at full: its echo was taken for the user's voice.
    func rewriteStart(read: Int, _ playing: Current) -> Int {
        let rate = playing.timeline.rate
        let afterRead = read + Int(Self.rewriteMarginSeconds * Double(rate))
        guard let echoReference, echoReference.readUntilNs > 0,
            let unread = playing.timeline.firstSample(heardAtOrAfter: echoReference.readUntilNs + UInt64(Self.referenceLeadSeconds * 1e9))
        else { return afterRead }
        return max(afterRead, unread)
    }

    /// Plays at `target` (1: as given). While a sound plays, the server is asked where it reads, and the sound it
    /// holds from `rewriteMarginSeconds` after that is written again at the new level; samples written meanwhile
    /// keep the old one until then. Without an answer the change applies from the next sample written.
    func setGain(_ target: Float) {
        guard let playing = current, playing.sound != nil else {
            gain.target = target
            return
        }
        let asked = pendingGain != nil
        pendingGain = (target, stops)
        guard !asked else { return }
        let me = Unmanaged.passUnretained(self).toOpaque()
        let op = pa_stream_update_timing_info(playing.stream, { s, success, userdata in
            guard let s, let userdata else { return }
            Unmanaged<PulsePlaybackEngine>.fromOpaque(userdata).takeUnretainedValue().readPositionKnown(s, success: success != 0)
        }, me)
        if let op { pa_operation_unref(op) } else { readPositionKnown(playing.stream, success: false) }
    }

    private func readPositionKnown(_ s: OpaquePointer, success: Bool) {
        guard let pending = pendingGain else { return }
        pendingGain = nil
        guard pending.stops == stops else { return }
        gain.target = pending.target
        guard success, let playing = current, playing.stream == s, let info = pa_stream_get_timing_info(s)?.pointee,
            info.read_index_corrupt == 0
        else { return }
        let read = Int(info.read_index / Int64(MemoryLayout<Int16>.size))
        // A lowering may land on reference the canceller has read at the old level: the echo is then under its
        // reference, which the canceller explains, and the user's barge-in needs the lowered reply soon. A raise may
        // not: an echo over its reference reads as the user (`rewriteStart`).
        let lowering = gain.target < gain.current
        rewriteQueued(from: lowering ? read + Int(Self.rewriteMarginSeconds * Double(playing.timeline.rate)) : rewriteStart(read: read, playing))
    }

    /// Writes the current sound again at the target level from stream sample `streamIndex` on, over what the server
    /// holds, and scales the echo reference from the same sample. With nothing of the sound left there, the change
    /// applies from the next sample written.
    private func rewriteQueued(from streamIndex: Int) {
        guard var playing = current, var sound = playing.sound, sound.written > 0, gain.current != gain.target else { return }
        let from = max(sound.startIndex, streamIndex)
        let soundEnd = sound.startIndex + sound.written
        guard from < soundEnd else { return }
        let index = from - sound.startIndex
        var next = gain
        let (scaled, ramp) = next.apply(sound.samples[index..<sound.written], sampleRate: playing.timeline.rate)
        // The silence written after a sound that was all written goes again as it was.
        let data = scaled + [Int16](repeating: 0, count: playing.timeline.written - soundEnd)
        let back = -Int64(playing.timeline.written - from) * Int64(MemoryLayout<Int16>.size)
        let result = data.withUnsafeBytes { pa_stream_write(playing.stream, $0.baseAddress, $0.count, nil, back, PA_SEEK_RELATIVE) }
        guard result == 0 else { return }
        logger.debug("Playback level rewritten in the server's buffer", metadata: [
            "audio.gain": "\(gain.target)", "audio.rewrittenMs": "\((playing.timeline.written - from) * 1000 / playing.timeline.rate)"])
        gain = next
        follow(ramp, in: &sound, fromSample: index, rate: playing.timeline.rate)
        playing.sound = sound
        current = playing
    }

    /// Scales the echo reference from sample `index` of the sound (at the stream's `rate`) on, as `ramp` scaled the
    /// sound (and everything after at its final gain), and places it again if it was placed.
    func follow(_ ramp: PlaybackGain.Ramp, in sound: inout Sound, fromSample index: Int, rate: Int) {
        guard let source = sound.referenceSource, var reference = sound.reference else { return }
        let start = min(source.count, index * EchoReference.sampleRate / max(1, rate))
        // At one level since the last change, the reference already has it (a sound's first write sets it).
        guard ramp.from != ramp.to || index == 0 else { return }
        reference.replaceSubrange(start..., with: PlaybackGain.scaled(source[start...], ramp, sampleRate: EchoReference.sampleRate))
        sound.reference = reference
        if let placed = sound.referenceStartNs { echoReference?.schedule(reference, at: placed) }
    }
}
