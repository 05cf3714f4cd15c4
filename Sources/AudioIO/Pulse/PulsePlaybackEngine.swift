import CPulse
import TalkLogging

/// The loop-thread half of `PulsePlayback`: a playback stream fed in small pieces as the server asks,
/// flushed and dropped to stop. A sound handed over soon after the last one ended goes into the same
/// stream, which plays silence in between (for `idleSeconds`, then closes): a reply's sentences then keep one
/// offset to their echo (`PlaybackTimeline`). Confined to its loop: call it only with
/// `PulseMainloop.withLock` held.
final class PulsePlaybackEngine {
    struct Sound {
        var samples: [Int16]
        var written = 0
        /// Where in the stream its first sample went (set when it is written).
        var startIndex = 0
        var completion: (Result<PlaybackOutcome, PulseError>) -> Void
        /// The sound at 16 kHz for the echo reference (as heard: scaled as `gain` scaled what was written),
        /// as given, and where on the monotonic clock it was last placed.
        var reference: [Int16]?
        var referenceSource: [Int16]?
        var referenceStartNs: UInt64?
        var end: Int { startIndex + samples.count }
    }

    struct Current {
        var stream: OpaquePointer
        var device: String
        var timeline: PlaybackTimeline
        /// nil while the stream plays silence between sounds.
        var sound: Sound?
        /// While idle: the stream sample after which it closes.
        var idleUntil = 0
        /// Whether a stream time beyond the clock was logged for this stream (once is enough to see it happen).
        var reportedBogusTime = false
    }

    let loop: PulseMainloop
    let connection: PulseConnection
    let requestedSink: String?
    let events: AsyncStream<PlaybackEvent>.Continuation
    let logger: Logger
    let retryInterval: Duration
    let echoReference: EchoReference?
    /// Every underrun the server reported, inside a sound or between sounds.
    let underruns: PlaybackUnderrunCount
    var current: Current?
    var recoveryTimer: OpaquePointer?
    /// Set while playback was reported on a fallback: brings it back to the requested sink when that returns.
    let homecoming: PulseDeviceWatch?
    var interrupted = false
    var closed = false
    /// Bumped by every `play` and `stop`: a play still connecting when it changes was superseded.
    private(set) var generation = 0
    /// The generation of a sound handed to an idle stream that waits for the server's read position
    /// (`startOverQueuedSilence`).
    var startPending: Int?
    /// The level sounds are written at (`setGain`); `stop()` returns it to 1.
    var gain = PlaybackGain()
    /// A level asked for while a sound plays, waiting for the server's read position (`setGain`), and the `stop()`s
    /// counted so far: one after it was asked drops it, as a stop returns the level.
    var pendingGain: (target: Float, stops: Int)?
    var stops = 0

    static var underrunMessage: String { PulsePlayback.underrunMessage }
    /// How long a stream plays silence after its sound before it closes: long enough that the next reply in a
    /// conversation usually finds it open, so the echo path the linear filter learnt still holds (a new stream
    /// lands a few samples elsewhere); short enough not to hold the sink awake long after a session goes quiet.
    static let idleSeconds = 10.0

    init(
        loop: PulseMainloop, server: String?, sink: String?, retryInterval: Duration,
        events: AsyncStream<PlaybackEvent>.Continuation, echoReference: EchoReference? = nil,
        underruns: PlaybackUnderrunCount = PlaybackUnderrunCount(), logger: Logger
    ) {
        self.echoReference = echoReference
        self.underruns = underruns
        self.loop = loop
        self.requestedSink = sink
        self.events = events
        self.logger = logger
        self.retryInterval = retryInterval
        self.connection = PulseConnection(loop: loop, server: server, logger: logger)
        connection.retryInterval = retryInterval
        self.homecoming = sink.map { PulseDeviceWatch(loop: loop, kind: .sink, name: $0, interval: retryInterval) }
        connection.onLost = { [unowned self] reason in interrupt(reason) }
    }

    /// Plays `buffer`; `completion` runs once, when it was heard, stopped, or failed. `reference` (the same
    /// sound at 16 kHz) goes on the echo reference where the server says it is heard.
    func play(
        _ buffer: PCMBuffer, reference: [Int16]? = nil, completion: @escaping (Result<PlaybackOutcome, PulseError>) -> Void
    ) {
        guard !closed else {
            completion(.failure(.playbackInterrupted(device: requestedSink ?? "default sink", reason: "playback was closed")))
            return
        }
        // A new sound replaces the one in progress; a stream idling between sounds may take it.
        if current?.sound != nil { stop() }
        var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: UInt32(clamping: buffer.sampleRate), channels: 1)
        guard buffer.sampleRate > 0, pa_sample_spec_valid(&spec) != 0 else {
            completion(.failure(.invalidAudio(reason: "PulseAudio cannot play a sample rate of \(buffer.sampleRate) Hz")))
            return
        }
        guard !buffer.samples.isEmpty else {
            completion(.success(.completed))
            return
        }
        if var idle = current, idle.sound == nil, idle.timeline.rate == buffer.sampleRate, !interrupted {
            generation &+= 1
            idle.sound = Sound(samples: buffer.samples, completion: completion, reference: reference, referenceSource: reference)
            current = idle
            startOverQueuedSilence()
            return
        }
        stop()
        generation &+= 1
        let mine = generation
        connection.whenReady(failFast: true) { [unowned self] result in
            guard mine == generation else {
                completion(.success(.stopped))
                return
            }
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let context):
                PulseIntrospection.sink(named: requestedSink, context, logger: logger) { [unowned self] sink in
                    guard mine == generation else {
                        completion(.success(.stopped))
                        return
                    }
                    guard !closed, connection.context == context else {
                        completion(.failure(.playbackInterrupted(device: sink ?? "default sink", reason: "the server went away")))
                        return
                    }
                    open(context, sink: sink, spec: spec, samples: buffer.samples, reference: reference, completion: completion)
                }
            }
        }
    }

    /// Cuts the current sound off: what is still buffered is flushed, not played. The next sound plays at full level.
    func stop() {
        generation &+= 1
        gain = PlaybackGain()
        stops &+= 1
        pendingGain = nil
        guard let playing = current else { return }
        pa_operation_unref_if_set(pa_stream_flush(playing.stream, nil, nil))
        finish(.success(.stopped))
    }

    /// Stops for good and finishes the event stream.
    func close() {
        guard !closed else { return }
        closed = true
        stop()
        if let recoveryTimer { loop.removeTimer(recoveryTimer) }
        recoveryTimer = nil
        homecoming?.cancel()
        connection.close()
        events.finish()
    }

    private func open(
        _ context: OpaquePointer, sink: String?, spec: pa_sample_spec, samples: [Int16], reference: [Int16]?,
        completion: @escaping (Result<PlaybackOutcome, PulseError>) -> Void
    ) {
        var spec = spec
        let props = PulseProperties.make(mediaName: "openclaw-talk voice")
        defer { pa_proplist_free(props) }
        let device = sink ?? "default sink"
        guard let s = pa_stream_new_with_proplist(context, "playback", &spec, nil, props) else {
            completion(.failure(.streamFailed(device: device, reason: PulseError.text(pa_context_errno(context)))))
            return
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_state_callback(s, { s, userdata in
            guard let s, let userdata else { return }
            Unmanaged<PulsePlaybackEngine>.fromOpaque(userdata).takeUnretainedValue().stateChanged(s)
        }, me)
        pa_stream_set_write_callback(s, { s, bytes, userdata in
            guard let s, let userdata else { return }
            Unmanaged<PulsePlaybackEngine>.fromOpaque(userdata).takeUnretainedValue().writeRequested(s, bytes: bytes)
        }, me)
        pa_stream_set_moved_callback(s, { s, userdata in
            guard let s, let userdata else { return }
            Unmanaged<PulsePlaybackEngine>.fromOpaque(userdata).takeUnretainedValue().moved(s)
        }, me)
        pa_stream_set_underflow_callback(s, { s, userdata in
            guard let s, let userdata else { return }
            Unmanaged<PulsePlaybackEngine>.fromOpaque(userdata).takeUnretainedValue().underflowed(s)
        }, me)
        var attr = PlaybackBufferPlan(rate: Int(spec.rate)).attributes
        // Not monotonic: libpulse otherwise returns the largest stream time it ever reported, so one bogus report
        // (under load its interpolated time now and then comes back near 2^64 µs) would be every later report too,
        // and the sound would never be heard to end (`play` waiting for ever). Each report is judged on its own
        // (`PlaybackTimeline.isStreamTime`); the timeline's bounds absorb the small steps back of the interpolation.
        let flags = pa_stream_flags_t(
            PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
                | PA_STREAM_INTERPOLATE_TIMING.rawValue | PA_STREAM_NOT_MONOTONIC.rawValue)
        let sound = Sound(samples: samples, completion: completion, reference: reference, referenceSource: reference)
        current = Current(stream: s, device: device, timeline: PlaybackTimeline(rate: Int(spec.rate)), sound: sound)
        if pa_stream_connect_playback(s, sink, &attr, flags, nil, nil) < 0, current?.stream == s {
            fail(reason: PulseError.text(pa_context_errno(context)))
        }
    }

    private func writeRequested(_ s: OpaquePointer, bytes: Int) {
        guard var playing = current, playing.stream == s else { return }
        var room = bytes / 2
        if var sound = playing.sound, sound.written < sound.samples.count {
            if sound.written == 0 {
                sound.startIndex = playing.timeline.written
                gain.startSound()
            }
            let count = min(room, sound.samples.count - sound.written)
            writeSound(s, &sound, count: count, padding: 0, offsetBytes: 0, rate: playing.timeline.rate)
            playing.timeline.wrote(count)
            room -= count
            playing.sound = sound
        }
        if room > 0 {
            // Silence after the sound keeps the stream's clock running for the next one.
            let silence = [Int16](repeating: 0, count: room)
            silence.withUnsafeBytes { _ = pa_stream_write(s, $0.baseAddress, room * 2, nil, 0, PA_SEEK_RELATIVE) }
            playing.timeline.wrote(room)
        }
        var usec: pa_usec_t = 0
        let nowNs = monotonicNanoseconds()
        guard pa_stream_get_time(s, &usec) == 0 else {
            current = playing
            return
        }
        guard PlaybackTimeline.isStreamTime(usec, nowNs: nowNs) else {
            if !playing.reportedBogusTime {
                playing.reportedBogusTime = true
                logger.warning("Playback: the server reported a stream time beyond the clock; skipped", metadata: ["audio.device": "\(playing.device)", "audio.streamTimeUsec": "\(usec)"])
            }
            current = playing
            return
        }
        placeReference(&playing, usec: usec, nowNs: nowNs)
        if let gap = playing.timeline.takeMeasuredGap() { reportGap(gap, playing) }
        let heard = playing.timeline.heardSamples(playedUsec: usec)
        if let sound = playing.sound, sound.written == sound.samples.count, heard >= sound.end {
            playing.sound = nil
            playing.idleUntil = sound.end + Int(Self.idleSeconds * Double(playing.timeline.rate))
            current = playing
            sound.completion(.success(.completed))
        } else if playing.sound == nil, heard >= playing.idleUntil {
            current = playing
            finish(.success(.completed))
        } else {
            current = playing
        }
    }

    /// Writes the sound's next `count` samples at the current level, then `padding` samples of silence, at
    /// `offsetBytes` from the stream's write position (negative: over what the server holds).
    func writeSound(_ s: OpaquePointer, _ sound: inout Sound, count: Int, padding: Int, offsetBytes: Int64, rate: Int) {
        let from = sound.written
        var data: [Int16]
        if gain.isUnity {
            data = Array(sound.samples[from..<(from + count)])
        } else {
            let (scaled, ramp) = gain.apply(sound.samples[from..<(from + count)], sampleRate: rate)
            data = scaled
            follow(ramp, in: &sound, fromSample: from, rate: rate)
        }
        if padding > 0 { data += [Int16](repeating: 0, count: padding) }
        data.withUnsafeBytes { _ = pa_stream_write(s, $0.baseAddress, $0.count, nil, offsetBytes, PA_SEEK_RELATIVE) }
        sound.written += count
    }

    /// Puts the sound on the echo reference where the server hears it: the stream's start is now minus the
    /// stream time played so far (which stands still while the stream waits to start or underruns, so the
    /// reference follows those gaps), and the sound sits as far into the stream as it was written.
    private func placeReference(_ playing: inout Current, usec: pa_usec_t, nowNs: UInt64) {
        playing.timeline.place(nowNs: nowNs, playedUsec: usec)
        guard let echoReference, var sound = playing.sound, sound.written > 0, let reference = sound.reference,
            let start = playing.timeline.heardNs(ofSample: sound.startIndex), start != sound.referenceStartNs
        else { return }
        if let placed = sound.referenceStartNs { echoReference.cut(at: placed) }
        echoReference.schedule(reference, at: start)
        sound.referenceStartNs = start
        playing.sound = sound
    }

    /// The server ran out of sound: the listener hears a gap, whether in a sound, in the silence before one (it
    /// starts late) or between sounds (the next one's echo placement is off all the same). Not fatal, but each is
    /// counted and logged where it fell, and its length once the stream has settled again (`reportGap`).
    private func underflowed(_ s: OpaquePointer) {
        guard var playing = current, playing.stream == s else { return }
        playing.timeline.underran()
        current = playing
        echoReference?.playbackHadGap()
        underruns.add()
        let index = pa_stream_get_underflow_index(s)
        let at = index >= 0 ? Int(index) / MemoryLayout<Int16>.size : playing.timeline.written
        logger.warning("\(Self.underrunMessage)", metadata: [
            "audio.device": "\(playing.device)", "audio.where": "\(Self.place(ofSample: at, playing))"])
    }

    /// Where stream sample `index` lies for the listener: in the sound (how far into it), in the silence queued
    /// before it, or between sounds.
    static func place(ofSample index: Int, _ playing: Current) -> String {
        guard let sound = playing.sound else { return "between sounds" }
        guard sound.written > 0, index >= sound.startIndex else { return "before a sound" }
        guard index < sound.end else { return "after a sound" }
        return "in a sound, \((index - sound.startIndex) * 1000 / playing.timeline.rate) ms into it"
    }

    /// The length of the gap the last underruns left, as the stream settled again after them.
    private func reportGap(_ gap: PlaybackTimeline.Gap, _ playing: Current) {
        logger.warning("Playback underrun's gap measured", metadata: [
            "audio.device": "\(playing.device)", "audio.underruns": "\(gap.underruns)",
            "audio.gapMs": gap.lengthNs.map { "\(Double($0 / 100_000) / 10)" } ?? "unknown"])
    }

    private func stateChanged(_ s: OpaquePointer) {
        guard let playing = current, playing.stream == s else { return }
        switch pa_stream_get_state(s) {
        case PA_STREAM_READY:
            if interrupted {
                interrupted = false
                events.yield(.resumed(device: pa_stream_get_device_name(s).map { String(cString: $0) } ?? playing.device))
            }
        case PA_STREAM_FAILED, PA_STREAM_TERMINATED:
            fail(reason: pa_stream_get_context(s).map { PulseError.text(pa_context_errno($0)) } ?? "stream ended")
        default:
            break
        }
    }

    /// Closes the stream; the sound in it (if any) ends with `result`.
    func finish(_ result: Result<PlaybackOutcome, PulseError>) {
        guard let playing = current else { return }
        current = nil
        pa_stream_set_state_callback(playing.stream, nil, nil)
        pa_stream_set_write_callback(playing.stream, nil, nil)
        pa_stream_set_moved_callback(playing.stream, nil, nil)
        pa_stream_set_underflow_callback(playing.stream, nil, nil)
        pa_stream_disconnect(playing.stream)
        pa_stream_unref(playing.stream)
        if playing.timeline.unmeasuredUnderruns > 0 {
            reportGap(.init(underruns: playing.timeline.unmeasuredUnderruns, lengthNs: nil), playing)
        }
        guard let sound = playing.sound else { return }
        if sound.referenceStartNs != nil, (try? result.get()) != .completed {
            echoReference?.cut(at: monotonicNanoseconds())
        }
        sound.completion(result)
    }
}

/// Releases an operation whose completion nobody waits for.
private func pa_operation_unref_if_set(_ op: OpaquePointer?) {
    if let op { pa_operation_unref(op) }
}
