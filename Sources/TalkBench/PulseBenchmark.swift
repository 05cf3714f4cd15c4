import AudioIO
import Foundation
import TalkLogging

/// Measures the PulseAudio path on this machine: capture-to-frame latency, the CPU an idle capture costs,
/// and how fast playback starts and stops as heard on the sink's monitor.
package struct PulseBenchmark: Sendable {
    /// Median and worst of a few trials, in milliseconds.
    package struct Spread: Sendable, Codable, Equatable {
        package var median: Double
        package var max: Double
    }

    package struct Report: Sendable, Codable, Equatable {
        package var source: String
        package var sink: String
        /// The monitor source playback was listened to on.
        package var monitor: String
        /// Time from a frame's last sample being captured to the frame reaching the consumer, on the stream's
        /// sample clock: the luckiest frame is assumed to have had only the server-reported latency, every
        /// other frame waited that plus how much later than it (in stream time) it arrived.
        package var captureLatencyP50Ms: Double
        package var captureLatencyP95Ms: Double
        /// Arrival time minus `AudioFrame.captureTimeNs` (which dates frames by the server's latency estimate).
        package var frameAgeP50Ms: Double
        package var frameAgeP95Ms: Double
        /// What the server itself reported for the capture stream at the end.
        package var serverCaptureLatencyMs: Double?
        /// CPU time (user + system) of this process while capturing and discarding frames, as a share of one core.
        package var idleCaptureCPUPercent: Double
        package var idleCaptureSeconds: Double
        /// `play()` call to the arrival of the first loud 20 ms frame at a client of the monitor; nil when no trial's sound
        /// was heard, with the reason in `playbackStartUnmeasured`.
        package var playbackStartLatencyMs: Spread?
        package var playbackStartUnmeasured: String?
        /// `stop()` call to the last loud sample reaching a client of the monitor (0 when nothing was heard
        /// after the call).
        package var playbackStopLatencyMs: Spread
        package var trials: Int
    }

    private let server: String?
    private let source: String?
    private let sink: String?
    private let idleSeconds: Double
    private let trials: Int
    private let logger: Logger

    /// - Parameters:
    ///   - source: the microphone to measure capture on (nil: the default source).
    ///   - sink: the sink to measure playback on, listened to through its monitor (nil: the default sink).
    package init(
        server: String? = nil, source: String? = nil, sink: String? = nil, idleSeconds: Double = 3, trials: Int = 5,
        logger: Logger
    ) {
        self.server = server
        self.source = source
        self.sink = sink
        self.idleSeconds = idleSeconds
        self.trials = max(1, trials)
        self.logger = logger
    }

    package func run() async throws -> Report {
        let devices = try await PulseDeviceList(server: server, logger: logger).devices()
        let sources = devices.filter { $0.kind == .source }
        guard let sinkName = sink ?? devices.first(where: { $0.kind == .sink && $0.isDefault })?.name,
            let sourceName = source ?? sources.first(where: \.isDefault)?.name
        else { throw PulseError.deviceNotFound(kind: .sink, name: sink ?? "(default)", available: devices.map(\.name)) }
        guard let monitor = sources.first(where: { $0.monitorOfSink == sinkName })?.name else {
            throw PulseError.deviceNotFound(kind: .source, name: "\(sinkName).monitor", available: sources.map(\.name))
        }

        let probe = LoudnessProbe(source: monitor, server: server, logger: logger)
        try await probe.start()
        let playback = try PulsePlayback(sink: sinkName, server: server, logger: logger)
        // A first sound wakes an idle sink (a null sink renders seconds ahead until a client asks for less).
        _ = try? await startLatency(playback, probe, timeout: .seconds(4))
        var starts: [Double] = []
        var stops: [Double] = []
        for _ in 0..<trials {
            if let ms = try await startLatency(playback, probe, timeout: .seconds(2)) { starts.append(ms) }
            try await Task.sleep(for: .milliseconds(150))
            stops.append(try await stopLatency(playback, probe))
            try await Task.sleep(for: .milliseconds(150))
        }

        // The measured capture starts before the probe stops, so the sink never falls back to idle timing.
        let capture = PulseCapture(source: sourceName, server: server, logger: logger)
        let events = try await capture.start()
        await probe.stop()
        await playback.close()
        let (arrivals, cpu) = await idleCapture(events)
        let ages = arrivals.map { (Double($0.arrival) - Double($0.frame.captureTimeNs)) / 1e6 }
        let latencies = Self.sampleClockLatencies(arrivals, minimumAge: ages.min() ?? 0)
        let serverLatency = await capture.latency().map { Double($0 / .microseconds(1)) / 1_000 }
        await capture.stop()
        guard let latencyP50 = BenchStatistics.percentile(latencies, 0.50), let latencyP95 = BenchStatistics.percentile(latencies, 0.95),
              let ageP50 = BenchStatistics.percentile(ages, 0.50), let ageP95 = BenchStatistics.percentile(ages, 0.95),
              let stopSpread = Self.spread(stops)
        else { throw PulseError.streamFailed(device: sourceName, reason: "no frame arrived in \(idleSeconds) s of capture") }
        let startSpread = Self.spread(starts)

        return Report(
            source: sourceName, sink: sinkName, monitor: monitor,
            captureLatencyP50Ms: latencyP50, captureLatencyP95Ms: latencyP95, frameAgeP50Ms: ageP50, frameAgeP95Ms: ageP95,
            serverCaptureLatencyMs: serverLatency, idleCaptureCPUPercent: cpu * 100, idleCaptureSeconds: idleSeconds,
            playbackStartLatencyMs: startSpread,
            playbackStartUnmeasured: startSpread == nil
                ? "none of \(trials) test tones was heard on \(monitor) within 2 s of play()" : nil,
            playbackStopLatencyMs: stopSpread, trials: trials)
    }

    /// Plays a short tone and answers how long after the call it was first heard, or nil if it never was.
    private func startLatency(_ playback: PulsePlayback, _ probe: LoudnessProbe, timeout: Duration) async throws -> Double? {
        let calledAt = monotonicNanoseconds()
        async let outcome = playback.play(TestSignal.tone(seconds: 0.3))
        let heard = await probe.wait(upTo: timeout) { $0.firstHeard(after: calledAt) != nil }
        _ = try await outcome
        guard heard, let first = await probe.firstHeard(after: calledAt) else { return nil }
        return Double(first &- calledAt) / 1e6
    }

    /// Starts a long tone, stops it once heard, and answers how long sound went on after `stop()`.
    private func stopLatency(_ playback: PulsePlayback, _ probe: LoudnessProbe) async throws -> Double {
        let calledAt = monotonicNanoseconds()
        async let outcome = playback.play(TestSignal.tone(seconds: 3))
        _ = await probe.wait(upTo: .seconds(2)) { $0.firstHeard(after: calledAt) != nil }
        try await Task.sleep(for: .milliseconds(200))
        let stoppedAt = monotonicNanoseconds()
        await playback.stop()
        _ = try await outcome
        let settled = stoppedAt + 300_000_000
        _ = await probe.wait(upTo: .seconds(2)) { ($0.newestArrival() ?? 0) > settled }
        guard let last = await probe.lastHeard(), last > stoppedAt else { return 0 }
        return Double(last - stoppedAt) / 1e6
    }

    /// Captures for `idleSeconds` after a 0.5 s warm-up, doing nothing with the frames but noting when each
    /// arrived.
    private func idleCapture(_ events: AsyncStream<CaptureEvent>) async -> (arrivals: [(frame: AudioFrame, arrival: UInt64)], cpuShare: Double) {
        let begin = monotonicNanoseconds()
        let warmUp: UInt64 = 500_000_000
        let span = UInt64(idleSeconds * 1e9)
        var arrivals: [(frame: AudioFrame, arrival: UInt64)] = []
        var measureStart: (wall: UInt64, cpu: Double)?
        var cpuShare = 0.0
        for await case .frame(let frame) in events {
            let now = monotonicNanoseconds()
            guard now - begin >= warmUp else { continue }
            arrivals.append((frame, now))
            guard let start = measureStart else {
                measureStart = (now, processCPUSeconds())
                continue
            }
            if now - start.wall >= span {
                cpuShare = (processCPUSeconds() - start.cpu) / (Double(now - start.wall) / 1e9)
                break
            }
        }
        return (arrivals, cpuShare)
    }

    /// Latency of each frame against the stream's sample clock (frame n is due n × 20 ms after frame 0), with
    /// the earliest-arriving frame taken to have waited only `minimumAge`.
    static func sampleClockLatencies(_ arrivals: [(frame: AudioFrame, arrival: UInt64)], minimumAge: Double) -> [Double] {
        let period = Double(AudioFrame.durationMs) * 1e6
        let offsets = arrivals.map { Double($0.arrival) - Double($0.frame.sequence) * period }
        guard let earliest = offsets.min() else { return [] }
        return offsets.map { ($0 - earliest) / 1e6 + max(0, minimumAge) }
    }

    static func spread(_ values: [Double]) -> Spread? {
        guard let median = BenchStatistics.percentile(values, 0.5), let max = values.max() else { return nil }
        return Spread(median: median, max: max)
    }
}
