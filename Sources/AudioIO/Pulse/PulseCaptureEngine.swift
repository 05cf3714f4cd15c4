import CPulse
import TalkLogging

/// The loop-thread half of `PulseCapture`: opens the record stream, turns what it reads into frames, and
/// reopens it (on the named source, or the default one when that is gone) after the server or device
/// went away. Confined to its loop: call it only with `PulseMainloop.withLock` held.
final class PulseCaptureEngine {
    private let loop: PulseMainloop
    private let connection: PulseConnection
    private let requestedSource: String?
    private let events: AsyncStream<CaptureEvent>.Continuation
    private let logger: Logger
    private let retryInterval: Duration
    /// Set while capture runs on a fallback: brings it back to the requested source when that returns.
    private let homecoming: PulseDeviceWatch?

    private var stream: OpaquePointer?
    private var retryTimer: OpaquePointer?
    private var assembler = FrameAssembler()
    private var startCompletion: ((Result<Void, PulseError>) -> Void)?
    private var interruptedAtNs: UInt64?
    private var closed = false
    /// The stream's last latency estimate, µs (0 before the first): a report that is none keeps it.
    private var lastLatencyUsec: Int64 = 0
    /// A device lookup for a new stream is in flight: a second one must not open a second stream.
    private var opening = false
    /// The source the stream is reading from now.
    private(set) var device: String?

    /// Fragment size asked of the server: 20 ms keeps steady-state latency under 30 ms.
    static let fragmentBytes = UInt32(AudioFrame.samplesPerFrame * 2)

    init(
        loop: PulseMainloop, server: String?, source: String?, retryInterval: Duration,
        events: AsyncStream<CaptureEvent>.Continuation, logger: Logger
    ) {
        self.loop = loop
        self.requestedSource = source
        self.events = events
        self.logger = logger
        self.retryInterval = retryInterval
        self.connection = PulseConnection(loop: loop, server: server, logger: logger)
        connection.retryInterval = retryInterval
        self.homecoming = source.map { PulseDeviceWatch(loop: loop, kind: .source, name: $0, interval: retryInterval) }
    }

    /// Connects and opens the stream; `completion` hears whether the first stream came up.
    func start(completion: @escaping (Result<Void, PulseError>) -> Void) {
        startCompletion = completion
        connection.onLost = { [unowned self] reason in interrupt(reason) }
        connection.whenReady(failFast: true) { [unowned self] result in
            switch result {
            case .success(let context): open(context)
            case .failure(let error): finishStart(.failure(error))
            }
        }
    }

    /// Latency between a sample reaching the source and the client reading it, as the server last reported;
    /// negative on a monitor source, whose audio arrives before the sink plays it.
    var latency: Duration? {
        guard let stream, let usec = Self.signedLatencyMicroseconds(stream) else { return nil }
        return .microseconds(usec)
    }

    /// Stops for good and finishes the event stream.
    func close() {
        guard !closed else { return }
        closed = true
        if let retryTimer { loop.removeTimer(retryTimer) }
        retryTimer = nil
        homecoming?.cancel()
        releaseStream()
        connection.close()
        finishStart(.failure(.streamFailed(device: requestedSource ?? "default source", reason: "capture was stopped")))
        events.finish()
    }

    private func open(_ context: OpaquePointer) {
        guard !closed, stream == nil, !opening else { return }
        guard let name = requestedSource else {
            connectStream(context, device: nil)
            return
        }
        opening = true
        PulseIntrospection.devices(.source, context) { [unowned self] sources in
            opening = false
            guard !closed, stream == nil, connection.context == context else { return }
            if sources.contains(where: { $0.name == name }) {
                homecoming?.cancel()
                connectStream(context, device: name)
            } else if startCompletion != nil {
                finishStart(.failure(.deviceNotFound(kind: .source, name: name, available: sources.map(\.name))))
            } else {
                logger.info("Source is gone; capturing from the default source", metadata: ["audio.device": "\(name)"])
                connectStream(context, device: nil)
                watchForRequestedSource()
            }
        }
    }

    private func connectStream(_ context: OpaquePointer, device: String?) {
        var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: UInt32(AudioFrame.sampleRate), channels: 1)
        let props = PulseProperties.make(mediaName: "openclaw-talk microphone")
        defer { pa_proplist_free(props) }
        guard let s = pa_stream_new_with_proplist(context, "capture", &spec, nil, props) else {
            streamFailed(reason: PulseError.text(pa_context_errno(context)))
            return
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_state_callback(s, { s, userdata in
            guard let s, let userdata else { return }
            Unmanaged<PulseCaptureEngine>.fromOpaque(userdata).takeUnretainedValue().stateChanged(s)
        }, me)
        pa_stream_set_read_callback(s, { s, _, userdata in
            guard let s, let userdata else { return }
            Unmanaged<PulseCaptureEngine>.fromOpaque(userdata).takeUnretainedValue().readAvailable(s)
        }, me)
        pa_stream_set_moved_callback(s, { s, userdata in
            guard let s, let userdata else { return }
            Unmanaged<PulseCaptureEngine>.fromOpaque(userdata).takeUnretainedValue().moved(s)
        }, me)
        var attr = pa_buffer_attr(
            maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max,
            fragsize: Self.fragmentBytes)
        // Not monotonic: libpulse otherwise keeps the largest stream time it ever reported, so one bogus report
        // would make every later latency bogus too (see `signedLatency(usec:negative:)`).
        let flags = pa_stream_flags_t(
            PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
                | PA_STREAM_INTERPOLATE_TIMING.rawValue | PA_STREAM_NOT_MONOTONIC.rawValue)
        stream = s
        if pa_stream_connect_record(s, device, &attr, flags) < 0, stream == s {
            streamFailed(reason: PulseError.text(pa_context_errno(context)))
        }
    }

    private func stateChanged(_ s: OpaquePointer) {
        guard s == stream else { return }
        switch pa_stream_get_state(s) {
        case PA_STREAM_READY:
            device = pa_stream_get_device_name(s).map { String(cString: $0) }
            let name = device ?? "default source"
            connection.keepTrying = true
            if startCompletion != nil {
                logger.debug("Capture started", metadata: ["audio.device": "\(name)"])
                finishStart(.success(()))
            } else if let since = interruptedAtNs {
                interruptedAtNs = nil
                let lostFrames = (monotonicNanoseconds() &- since) / UInt64(AudioFrame.durationMs * 1_000_000)
                assembler.restart(skippedFrames: lostFrames)
                logger.info("Capture resumed", metadata: ["audio.device": "\(name)"])
                events.yield(.resumed(device: name))
            }
        case PA_STREAM_FAILED, PA_STREAM_TERMINATED:
            let reason = pa_stream_get_context(s).map { PulseError.text(pa_context_errno($0)) } ?? "stream ended"
            streamFailed(reason: reason)
        default:
            break
        }
    }

    /// The server moved the stream: it does that itself when the source vanishes (falling back to the
    /// default), and a user may do it from a mixer. Only the first is an interruption worth reporting.
    private func moved(_ s: OpaquePointer) {
        guard s == stream, let context = pa_stream_get_context(s) else { return }
        let previous = device
        device = pa_stream_get_device_name(s).map { String(cString: $0) }
        let now = device ?? "default source"
        if let requested = requestedSource, now == requested, previous != requested {
            // Back on the named source, moved there by someone else: PulseAudio itself when a stream's preferred
            // source returns (before the watch looks), or a mixer. Said once, as `movedBack` says its own move.
            homecoming?.cancel()
            logger.info("Source is back; the server moved capture back to it", metadata: ["audio.device": "\(requested)"])
            events.yield(.resumed(device: requested))
            return
        }
        guard let name = requestedSource ?? previous else { return }
        PulseIntrospection.devices(.source, context) { [unowned self] sources in
            guard s == stream, !sources.contains(where: { $0.name == name }) else {
                logger.info("Capture moved", metadata: ["audio.device": "\(now)"])
                return
            }
            logger.info("Source is gone; the server moved capture to the default source", metadata: ["audio.device": "\(now)"])
            events.yield(.interrupted(reason: "the source \(name) disappeared"))
            events.yield(.resumed(device: now))
            if name == requestedSource { watchForRequestedSource() }
        }
    }

    /// Capture runs on a fallback: once the requested source exists again, the stream moves back to it.
    /// Moving keeps the stream, so frames and their numbering go on without a gap.
    private func watchForRequestedSource() {
        homecoming?.watch(context: { [unowned self] in connection.context }) { [unowned self] context in
            guard let name = requestedSource, device != name else { return }
            guard let s = stream, pa_stream_get_state(s) == PA_STREAM_READY else {
                watchForRequestedSource()  // still connecting, or between reconnects: look again later
                return
            }
            let me = Unmanaged.passUnretained(self).toOpaque()
            let op = pa_context_move_source_output_by_name(context, pa_stream_get_index(s), name, { _, success, userdata in
                guard let userdata else { return }
                Unmanaged<PulseCaptureEngine>.fromOpaque(userdata).takeUnretainedValue().movedBack(success: success != 0)
            }, me)
            if let op { pa_operation_unref(op) } else { watchForRequestedSource() }
        }
    }

    private func movedBack(success: Bool) {
        guard !closed, stream != nil, let name = requestedSource else { return }
        guard success else {
            logger.debug("Could not move capture back yet", metadata: ["audio.device": "\(name)"])
            watchForRequestedSource()
            return
        }
        guard device != name else { return }  // `moved` saw the move first and said so
        device = name
        logger.info("Source is back; capture moved back to it", metadata: ["audio.device": "\(name)"])
        events.yield(.resumed(device: name))
    }

    private func streamFailed(reason: String) {
        let name = device ?? requestedSource ?? "default source"
        releaseStream()
        if startCompletion != nil {
            connection.close()
            finishStart(.failure(.streamFailed(device: name, reason: reason)))
        } else {
            interrupt("the capture stream on \(name) ended (\(reason))")
        }
    }

    /// Reports the outage once, then polls until a stream is open again.
    private func interrupt(_ reason: String) {
        releaseStream()
        opening = false  // a lookup on a lost context never answers
        guard !closed else { return }
        if interruptedAtNs == nil {
            interruptedAtNs = monotonicNanoseconds()
            logger.info("Capture interrupted", metadata: ["audio.reason": "\(reason)"])
            events.yield(.interrupted(reason: reason))
        }
        scheduleReopen()
    }

    private func scheduleReopen() {
        guard retryTimer == nil, !closed else { return }
        retryTimer = loop.addTimer(after: retryInterval, userdata: Unmanaged.passUnretained(self).toOpaque()) { _, _, _, userdata in
            guard let userdata else { return }
            Unmanaged<PulseCaptureEngine>.fromOpaque(userdata).takeUnretainedValue().reopen()
        }
    }

    private func reopen() {
        if let retryTimer { loop.removeTimer(retryTimer) }
        retryTimer = nil
        connection.whenReady(failFast: false) { [unowned self] result in
            if case .success(let context) = result { open(context) }
        }
    }

    private func readAvailable(_ s: OpaquePointer) {
        guard s == stream else { return }
        var data: UnsafeRawPointer?
        var bytes = 0
        while pa_stream_readable_size(s) > 0, pa_stream_peek(s, &data, &bytes) == 0, bytes > 0 {
            if let data {
                assembler.append(UnsafeRawBufferPointer(start: data, count: bytes))
            } else {
                assembler.appendSilence(samples: bytes / 2)  // a hole in the server's buffer: keep time
            }
            pa_stream_drop(s)
        }
        // On a monitor source the latency is negative: the audio is captured before the sink plays it,
        // and its capture time is when it is played.
        if let usec = Self.signedLatencyMicroseconds(s) { lastLatencyUsec = usec }
        let latencyNs = lastLatencyUsec * 1_000
        let newest = UInt64(max(0, Int64(monotonicNanoseconds()) - latencyNs))
        for frame in assembler.takeFrames(newestSampleTimeNs: newest) {
            events.yield(.frame(frame))
        }
    }

    private func releaseStream() {
        guard let s = stream else { return }
        stream = nil
        lastLatencyUsec = 0
        pa_stream_set_state_callback(s, nil, nil)
        pa_stream_set_read_callback(s, nil, nil)
        pa_stream_set_moved_callback(s, nil, nil)
        pa_stream_disconnect(s)
        pa_stream_unref(s)
    }

    private func finishStart(_ result: Result<Void, PulseError>) {
        guard let completion = startCompletion else { return }
        startCompletion = nil
        completion(result)
    }

    /// The server's latency estimate, negative for a monitor source (see `pa_timing_info`); nil when it has none.
    static func signedLatencyMicroseconds(_ s: OpaquePointer) -> Int64? {
        var usec: pa_usec_t = 0
        var negative: Int32 = 0
        guard pa_stream_get_latency(s, &usec, &negative) == 0 else { return nil }
        return signedLatency(usec: usec, negative: negative != 0)
    }

    /// A latency longer than this is no estimate: a capture stream buffers well under a second.
    static let maximumLatencyUsec: pa_usec_t = 10_000_000

    /// The latency report as a signed figure, or nil when it is none. Under load libpulse's interpolated stream
    /// time now and then comes back near 2^64 µs, and a latency computed from it is as large (converting it to
    /// Int64, or to nanoseconds, traps).
    static func signedLatency(usec: pa_usec_t, negative: Bool) -> Int64? {
        guard usec <= maximumLatencyUsec else { return nil }
        return negative ? -Int64(usec) : Int64(usec)
    }
}
