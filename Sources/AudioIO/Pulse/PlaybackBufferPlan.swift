import CPulse

/// The buffer a playback stream asks the server for (`PA_STREAM_ADJUST_LATENCY`), from the two figures that matter:
/// how much the sink itself holds (`sinkLatency`) and how long the refill may be late before the sink runs dry
/// (`refillSlack`).
///
/// The rule both servers apply (PulseAudio's protocol-native and PipeWire 0.3's pulse server alike): with
/// `tlength` the whole latency asked for and `minreq` the smallest request, the sink is set to
/// (tlength − 2·minreq) / 2, the stream's own queue holds the rest (sink + 2·minreq), and the server asks for more
/// once `minreq` of it is free, that is with sink + minreq still queued. That queued sound is what a refill may
/// be late by: so minreq = slack − sink and tlength = 2·slack.
///
/// Why these figures: the refill passes the server's protocol thread, which runs in the normal scheduling class
/// (PulseAudio's main thread at nice −11, pipewire-pulse's likewise; without shared memory, as the private servers
/// the bench and the tests run, every request and every write goes through it). On two loaded cores it is now and
/// then 50 ms and more late; with the 50 ms the stream used to leave (tlength 100 ms, minreq 10 ms), a sustained
/// load (`stress-ng --cpu 4`) gave 4 underruns in 68 s of speech, 100 ms gave 1, and with the server's thread moved
/// to realtime neither had any (the client's own loop thread is realtime already: `PulseMainloop`).
struct PlaybackBufferPlan: Equatable {
    /// What the sink holds: how soon a new stream's sound is heard, and part of the echo path the canceller learns
    /// (`stop()` flushes the stream, so it does not wait for it). Unchanged at 40 ms.
    static let sinkLatency = Duration.milliseconds(40)
    /// How long the refill (the server's request, this process's write, the server taking it) may be late before
    /// the sink runs dry and the sound gets a gap (`PlaybackTimeline.underran`, a false barge-in's usual start).
    static let refillSlack = Duration.milliseconds(100)

    /// The stream's rate (samples per second, mono 16-bit).
    let rate: Int

    /// The whole latency asked for, in bytes: twice the slack.
    var targetLengthBytes: Int { bytes(Self.refillSlack * 2) }
    /// The smallest request, in bytes: the slack beyond what the sink holds.
    var minimumRequestBytes: Int { bytes(Self.refillSlack - Self.sinkLatency) }

    /// The attributes for `pa_stream_connect_playback` (the server's defaults for the rest: maxlength, and prebuf,
    /// which is tlength − minreq, so a stream starts, and restarts after an underrun, with the slack queued).
    var attributes: pa_buffer_attr {
        pa_buffer_attr(
            maxlength: UInt32.max, tlength: UInt32(targetLengthBytes), prebuf: UInt32.max,
            minreq: UInt32(minimumRequestBytes), fragsize: UInt32.max)
    }

    /// How long (ms) the queue the server holds when it asks for more lasts, from the attributes it granted (the
    /// stream's own queue, after the sink's part was taken out of tlength): the slack a refill really has.
    static func grantedSlackMs(_ granted: pa_buffer_attr, rate: Int) -> Double {
        let queued = Int64(granted.tlength) - Int64(granted.minreq)
        return Double(queued) / 2 / Double(rate) * 1000
    }

    private func bytes(_ duration: Duration) -> Int {
        Int(duration / .microseconds(1)) * rate / 1_000_000 * 2
    }
}
