import CPulse
import TalkLogging

/// `PulsePlaybackEngine` when the sink or the server goes away: playback moved by the server, the outage reported
/// once, the server polled until it can play again, and a sound brought back to the requested sink when it returns.
/// Confined to the loop as the engine is.
extension PulsePlaybackEngine {
    /// The server moved the stream, which it does itself when the sink vanishes: playback goes on there.
    func moved(_ s: OpaquePointer) {
        guard let playing = current, playing.stream == s, let context = pa_stream_get_context(s) else { return }
        let previous = playing.device
        let now = pa_stream_get_device_name(s).map { String(cString: $0) } ?? "default sink"
        current?.device = now
        PulseIntrospection.devices(.sink, context) { [unowned self] sinks in
            guard !closed, !sinks.contains(where: { $0.name == previous }) else {
                logger.info("Playback moved", metadata: ["audio.device": "\(now)"])
                return
            }
            logger.info("Sink is gone; the server moved playback to the default sink", metadata: ["audio.device": "\(now)"])
            events.yield(.interrupted(reason: "the sink \(previous) disappeared"))
            events.yield(.resumed(device: now))
            if previous == requestedSink { watchForRequestedSink() }
        }
    }

    /// Playback was reported on a fallback: once the requested sink exists again, a sound in progress moves
    /// back to it and `.resumed` names it (the next `play` picks it anyway).
    func watchForRequestedSink() {
        homecoming?.watch(context: { [unowned self] in connection.context }) { [unowned self] context in
            guard !closed, !interrupted, let name = requestedSink else { return }
            guard let playing = current, playing.device != name else {
                cameBack(to: name)  // idle, or a newer sound already plays there
                return
            }
            let me = Unmanaged.passUnretained(self).toOpaque()
            let op = pa_context_move_sink_input_by_name(context, pa_stream_get_index(playing.stream), name, { _, success, userdata in
                guard let userdata else { return }
                Unmanaged<PulsePlaybackEngine>.fromOpaque(userdata).takeUnretainedValue().movedBack(success: success != 0)
            }, me)
            if let op { pa_operation_unref(op) } else { watchForRequestedSink() }
        }
    }

    func movedBack(success: Bool) {
        guard !closed, !interrupted, let name = requestedSink else { return }
        guard success else {
            // The sound may have ended meanwhile, or the sink gone again: look again (or report it idle).
            watchForRequestedSink()
            return
        }
        current?.device = name
        cameBack(to: name)
    }

    func cameBack(to name: String) {
        logger.info("Sink is back; playback returns to it", metadata: ["audio.device": "\(name)"])
        events.yield(.resumed(device: name))
    }

    func fail(reason: String) {
        let device = current?.device ?? requestedSink ?? "default sink"
        finish(.failure(.playbackInterrupted(device: device, reason: reason)))
        interrupt("playback on \(device) ended (\(reason))")
    }

    /// Reports the outage once and polls until the server (and a sink) can be used again.
    func interrupt(_ reason: String) {
        if let playing = current {
            finish(.failure(.playbackInterrupted(device: playing.device, reason: reason)))
        }
        guard !closed, !interrupted else { return }
        interrupted = true
        homecoming?.cancel()  // recovery picks the sink afresh
        logger.info("Playback interrupted", metadata: ["audio.reason": "\(reason)"])
        events.yield(.interrupted(reason: reason))
        scheduleRecoveryCheck()
    }

    func scheduleRecoveryCheck() {
        guard recoveryTimer == nil, !closed else { return }
        recoveryTimer = loop.addTimer(after: retryInterval, userdata: Unmanaged.passUnretained(self).toOpaque()) { _, _, _, userdata in
            guard let userdata else { return }
            Unmanaged<PulsePlaybackEngine>.fromOpaque(userdata).takeUnretainedValue().checkRecovery()
        }
    }

    func checkRecovery() {
        if let recoveryTimer { loop.removeTimer(recoveryTimer) }
        recoveryTimer = nil
        connection.keepTrying = true
        connection.whenReady(failFast: false) { [unowned self] result in
            guard case .success(let context) = result, interrupted, !closed else { return }
            PulseIntrospection.sink(named: requestedSink, context, logger: logger) { [unowned self] sink in
                guard interrupted, !closed else { return }
                // No sink to name yet (a restarted PipeWire before WirePlumber has picked its default): look again.
                guard let name = sink else { return scheduleRecoveryCheck() }
                interrupted = false
                logger.info("Playback can resume", metadata: ["audio.device": "\(name)"])
                events.yield(.resumed(device: name))
                if let requestedSink, sink != requestedSink { watchForRequestedSink() }
            }
        }
    }
}
