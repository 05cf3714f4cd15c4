import CEchoCanceller

/// What went wrong creating or feeding an echo canceller.
package enum EchoCancelError: Error, Equatable, CustomStringConvertible {
    case unsupportedRate(Int)
    /// A frame that is not a whole number of 10 ms sub-frames at the canceller's rate.
    case badFrameSize(samples: Int, sampleRate: Int)
    case invalidOption(String)
    case library(operation: String, code: Int32)
    /// A loopback measurement heard nothing of what it played.
    case noEcho(source: String, sink: String)

    package var description: String {
        switch self {
        case .unsupportedRate(let rate):
            return "Echo cancellation runs at 8, 16, 32 or 48 kHz, not \(rate) Hz"
        case .badFrameSize(let samples, let rate):
            return "Echo cancellation takes whole 10 ms frames (\(rate / 100) samples at \(rate) Hz); got \(samples) samples"
        case .invalidOption(let reason):
            return "Invalid echo cancellation option: \(reason)"
        case .library(let operation, let code):
            return "WebRTC audio processing failed to \(operation) (error \(code))"
        case .noEcho(let source, let sink):
            return "Nothing played into \(sink) came back on \(source): pick a source that hears the sink (its monitor)"
        }
    }
}

/// The stages of WebRTC's audio processing that run with echo cancellation.
///
/// Echo cancellation and the high-pass filter are on by default, noise suppression and gain control off:
/// PocketSphinx's word error rate on the dev corpus (36 clips, 324 words, `bench speech --aec-stages`, release
/// build) is 44.4 % unprocessed, 50.3 % through echo cancellation alone (no far end), 49.4 % with the
/// high-pass filter added, 50.6 % with moderate noise suppression instead, 50.9 % with gain control instead,
/// 51.5 % with all three.
package struct EchoCancellerOptions: Sendable, Equatable {
    package enum NoiseSuppression: Int32, Sendable, Equatable, CaseIterable {
        case low = 0, moderate, high, veryHigh
    }

    package enum EchoSuppression: Int32, Sendable, Equatable {
        case low = 0, moderate, high
    }

    package var sampleRate: Int
    package var highPassFilter: Bool
    /// nil: off.
    package var noiseSuppression: NoiseSuppression?
    /// Adaptive digital gain control.
    package var gainControl: Bool
    /// How hard the non-linear stage suppresses what the adaptive filter leaves of the echo. Low by default:
    /// it cancels as much echo as the others on the synthetic and loopback paths, and harder suppression
    /// also eats the user's speech while the reply plays (double talk), which barge-in must hear.
    package var echoSuppression: EchoSuppression
    /// How long after its reference the echo is expected in the capture. WebRTC's delay-agnostic mode finds
    /// the exact delay itself, but only within a window of about 110 ms that this places: measured on the
    /// synthetic path, 60 ms cancels echoes 20 to 150 ms after their reference by 27 dB or more (0 ms: 20 to
    /// 130 ms). That covers the playback tap's schedule (the sound server's start-up and buffering, 30 to
    /// 80 ms) plus `EchoCancellingCapture`'s 20 ms lead.
    package var streamDelayMs: Int
    /// How long an echo tail (ms) Speex's linear adaptive filter covers in front of WebRTC's canceller; 0: no
    /// linear stage. Why: WebRTC 0.3's canceller is close to half-duplex. Where the echo is louder than the
    /// user, its suppressor takes the user's speech for echo and removes it with the echo (on the loopback, a
    /// user 8 dB under the reply came out 15 to 40 dB down). Speex's filter subtracts its estimate of the echo
    /// and nothing else (about 20 dB of it once converged): WebRTC meets a weaker echo beside the user and takes
    /// less of them, and while `DoubleTalkDetector` hears the user over the echo, `EchoCancellingCapture` passes
    /// Speex's output on instead of WebRTC's. 200 ms covers the echo's lag behind its reference
    /// (`streamDelayMs`'s window) with room for reverberation. On by default since playback keeps a reply's
    /// sentences in one stream (`PlaybackTimeline`): before, each sentence's reference landed a few samples
    /// elsewhere, the filter relearnt it every time, and it did not make barge-in over the reply work.
    /// `bench aec --linear-stage-ms 0` measures without it.
    package var linearStageMs: Int
    /// Whether `EchoCancellingCapture` silences what does not stand out over the canceller's expected residual
    /// while something plays (`ResidualEchoSuppressor`). Off only to measure the canceller alone.
    package var suppressResidualEcho: Bool

    package init(
        sampleRate: Int = AudioFrame.sampleRate, highPassFilter: Bool = true, noiseSuppression: NoiseSuppression? = nil,
        gainControl: Bool = false, echoSuppression: EchoSuppression = .low, streamDelayMs: Int = 60,
        suppressResidualEcho: Bool = true, linearStageMs: Int = 200
    ) {
        self.suppressResidualEcho = suppressResidualEcho
        self.linearStageMs = linearStageMs
        self.sampleRate = sampleRate
        self.highPassFilter = highPassFilter
        self.noiseSuppression = noiseSuppression
        self.gainControl = gainControl
        self.echoSuppression = echoSuppression
        self.streamDelayMs = streamDelayMs
    }
}

/// What the library measures about the echo it is cancelling.
package struct EchoCancellerStatistics: Sendable, Equatable {
    /// Echo return loss and its enhancement by the canceller (running averages, dB); nil before it knows.
    package var echoReturnLossDb: Int?
    package var echoReturnLossEnhancementDb: Int?
    /// The reference-to-echo delay the library estimates, in ms; nil before it knows.
    package var delayMedianMs: Int?
    package var delayStdMs: Int?
    /// Whether the last processed frame held echo.
    package var streamHasEcho: Bool
}

/// In-process acoustic echo cancellation with WebRTC's audio processing: hand it every frame that is
/// played (`analyzeReverse`), then every captured frame (`process`), which comes back with the echo of
/// what was played removed. Mono 16-bit PCM, any whole number of 10 ms frames per call. The output lags
/// the input by 7 ms (the library's block processing).
///
/// Cheap (about 360 µs per 20 ms frame in a debug build with the linear stage, 185 µs without: under 2 % of a core)
/// but not thread-safe: confine it to its owner, as
/// `EchoCancellingCapture` does.
package final class EchoCanceller {
    package let options: EchoCancellerOptions
    private let handle: OpaquePointer
    private let subFrame: Int

    /// - Throws: `EchoCancelError` for a rate the library does not run at or an option it refuses.
    package init(options: EchoCancellerOptions = EchoCancellerOptions()) throws {
        guard [8000, 16_000, 32_000, 48_000].contains(options.sampleRate) else {
            throw EchoCancelError.unsupportedRate(options.sampleRate)
        }
        guard (0...500).contains(options.streamDelayMs) else {
            throw EchoCancelError.invalidOption("a stream delay of \(options.streamDelayMs) ms is outside 0...500 ms")
        }
        guard (0...500).contains(options.linearStageMs) else {
            throw EchoCancelError.invalidOption("a linear stage of \(options.linearStageMs) ms is outside 0...500 ms")
        }
        var c = oc_aec_options(
            high_pass_filter: options.highPassFilter ? 1 : 0,
            noise_suppression: options.noiseSuppression?.rawValue ?? -1,
            gain_control: options.gainControl ? 1 : 0,
            suppression_level: options.echoSuppression.rawValue, linear_stage_ms: Int32(options.linearStageMs))
        var error: Int32 = 0
        guard let created = oc_aec_create(Int32(options.sampleRate), &c, &error) else {
            throw Self.error(error, operation: "start", rate: options.sampleRate, samples: 0, handle: nil)
        }
        handle = created
        self.options = options
        subFrame = options.sampleRate / 100
    }

    deinit {
        oc_aec_destroy(handle)
    }

    /// Samples in one 10 ms sub-frame.
    package var samplesPerSubFrame: Int { subFrame }

    /// Feeds audio as it is played (the far end); call it before `process` for the capture that may hold its echo.
    package func analyzeReverse(_ samples: [Int16]) throws {
        try checkSize(samples.count)
        try samples.withUnsafeBufferPointer { buffer in
            for start in stride(from: 0, to: buffer.count, by: subFrame) {
                let r = oc_aec_analyze_reverse(handle, buffer.baseAddress! + start, subFrame)
                if r != 0 { throw Self.error(r, operation: "analyse the reference", rate: options.sampleRate, samples: samples.count, handle: handle) }
            }
        }
    }

    /// Cleans captured audio (the near end): the echo of what was handed to `analyzeReverse` is removed.
    package func process(_ samples: [Int16]) throws -> [Int16] {
        try processKeepingLinear(samples).cleaned
    }

    /// `process`, also returning what the linear stage left (the capture itself without the stage): the
    /// echo only partly removed, but the user's speech whole, where WebRTC's suppressor takes some of it.
    package func processKeepingLinear(_ samples: [Int16]) throws -> (cleaned: [Int16], linear: [Int16]) {
        try checkSize(samples.count)
        var out = samples
        var linear = samples
        let delay = Int32(options.streamDelayMs)
        try out.withUnsafeMutableBufferPointer { buffer in
            try linear.withUnsafeMutableBufferPointer { kept in
                for start in stride(from: 0, to: buffer.count, by: subFrame) {
                    let r = oc_aec_process_linear(handle, buffer.baseAddress! + start, subFrame, delay, kept.baseAddress! + start)
                    if r != 0 { throw Self.error(r, operation: "process the capture", rate: options.sampleRate, samples: samples.count, handle: handle) }
                }
            }
        }
        return (out, linear)
    }

    package var statistics: EchoCancellerStatistics {
        var s = oc_aec_stats()
        oc_aec_stats_get(handle, &s)
        func known(_ v: Int32) -> Int? { v == Int32.min ? nil : Int(v) }
        return EchoCancellerStatistics(
            echoReturnLossDb: known(s.echo_return_loss), echoReturnLossEnhancementDb: known(s.echo_return_loss_enhancement),
            delayMedianMs: s.delay_median_ms < 0 ? nil : Int(s.delay_median_ms),
            delayStdMs: s.delay_std_ms < 0 ? nil : Int(s.delay_std_ms), streamHasEcho: s.stream_has_echo != 0)
    }

    private func checkSize(_ count: Int) throws {
        guard count > 0, count % subFrame == 0 else {
            throw EchoCancelError.badFrameSize(samples: count, sampleRate: options.sampleRate)
        }
    }

    private static func error(_ code: Int32, operation: String, rate: Int, samples: Int, handle: OpaquePointer?) -> EchoCancelError {
        switch code {
        case Int32(OC_AEC_BAD_RATE): return .unsupportedRate(rate)
        case Int32(OC_AEC_BAD_FRAME): return .badFrameSize(samples: samples, sampleRate: rate)
        case Int32(OC_AEC_BAD_OPTION): return .invalidOption("the library refused the options")
        case Int32(OC_AEC_LIBRARY): return .library(operation: operation, code: handle.map { oc_aec_last_library_error($0) } ?? code)
        default: return .library(operation: operation, code: code)
        }
    }
}

@available(*, unavailable)
extension EchoCanceller: Sendable {}
