import AudioIO
import Foundation
import TalkLogging

/// How `run` keeps the reply's echo out of the microphone (`--aec`).
enum EchoCancelMode: String, CaseIterable, Sendable {
    /// The default: in-process WebRTC echo cancellation.
    case auto
    /// `EchoCancellingCapture` cleans every captured frame against what playback hands to the speaker.
    case webrtc
    /// PulseAudio's `module-echo-cancel`, loaded over the sink and source for the session.
    case pulse
    case off

    /// `--aec`'s value; `pulse` needs PulseAudio devices at both ends (the module sits between them).
    static func parse(_ value: String?, devices: AudioDeviceOptions) throws -> EchoCancelMode {
        guard let value else { return .auto }
        guard let mode = EchoCancelMode(rawValue: value.lowercased()) else {
            throw ValidationError("Invalid value '\(value.prefix(40))' for '--aec': expected auto, webrtc, pulse or off")
        }
        if mode == .pulse, devices.input != nil || devices.output != nil {
            throw ValidationError("'--aec pulse' needs PulseAudio for both the microphone and the speaker (not '--input' or '--output'); use '--aec webrtc'")
        }
        return mode
    }

    /// What `auto` stands for.
    var resolved: EchoCancelMode { self == .auto ? .webrtc : self }
}

/// The microphone and the speaker of a `run` session, wrapped for echo cancellation as `--aec` asks: the
/// session gets a capture and a playback device and does not know which of these is behind them.
struct RunAudio {
    var capture: any AudioCaptureDevice
    var playback: any AudioPlaybackDevice
    /// The output track of a file session, started with the session.
    var track: ContinuousTrackSink?
    /// Which echo cancellation is active, as the events, the log and the status show it.
    var echoCancellation: String
    private var cleaned: EchoCancellingCapture?
    private var module: PulseEchoCancelModule.Loaded?
    private let logger: Logger

    struct Request {
        var mode: EchoCancelMode
        /// The microphone and the speaker as `run`'s options name them.
        var devices: AudioDeviceOptions
        /// `OPENCLAW_TALK_AEC_RECORD`: a folder the in-process canceller's input is recorded to when the session
        /// ends (`bench aec --replay` plays it back), for an echo problem seen on one machine.
        var aecRecord: String? = ProcessInfo.processInfo.environment["OPENCLAW_TALK_AEC_RECORD"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Opens the devices. `--aec pulse` loads `module-echo-cancel` here (undone by `close()`).
    /// - Throws: `PulseError` when the server refuses the module (a file for either device was refused by `parse`).
    static func open(_ request: Request, logger: Logger) async throws -> RunAudio {
        let mode = request.mode.resolved
        var module: PulseEchoCancelModule.Loaded?
        var devices = request.devices
        if mode == .pulse {
            let loaded = try await PulseEchoCancelModule(logger: logger).load(masterSink: devices.sink, masterSource: devices.source)
            (devices.source, devices.sink, module) = (loaded.source, loaded.sink, loaded)
        }
        let reference = mode == .webrtc ? EchoReference() : nil
        var capture = devices.capture(endlessSilence: true, logger: logger)
        var cleaned: EchoCancellingCapture?
        if let reference {
            let wrapped = EchoCancellingCapture(capture, reference: reference, recordTo: request.aecRecord, logger: logger)
            (capture, cleaned) = (wrapped, wrapped)
        }
        var playback: any AudioPlaybackDevice
        var track: ContinuousTrackSink?
        do {
            if let output = devices.output, !devices.fast {
                // Paced: one track from the session's start, so a file session times like a live one.
                let continuous = try ContinuousTrackSink(path: output, sampleRate: 16_000, logger: logger)
                (playback, track) = (continuous, continuous)
                if let reference { playback = EchoReferencePlayback(continuous, reference: reference, logger: logger) }
            } else {
                playback = try devices.playback(sampleRate: 16_000, echoReference: reference, logger: logger)
            }
        } catch {
            if let module { try? await PulseEchoCancelModule(logger: logger).unload(module) }
            throw error
        }
        let description: String =
            switch mode {
            case .webrtc: "webrtc"
            case .pulse: "pulse (module-echo-cancel #\(module?.index ?? 0): \(devices.sink ?? "?"), \(devices.source ?? "?"))"
            case .auto, .off: "off"
            }
        logger.info("Echo cancellation", metadata: ["audio.aec": "\(description)"])
        return RunAudio(
            capture: capture, playback: playback, track: track, echoCancellation: description, cleaned: cleaned, module: module,
            logger: logger)
    }

    func startTrack() async { await track?.start() }

    /// The event that opens `--json`'s stream: which echo cancellation runs (`mode`: webrtc, pulse or off).
    func eventLine(now: Date = Date()) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let object: [String: Any] = [
            "event": "echoCancellation", "time": formatter.string(from: now), "monotonicMs": 0,
            "mode": echoCancellation.split(separator: " ").first.map(String.init) ?? "off", "detail": echoCancellation,
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return #"{"event":"error","message":"an event could not be encoded"}"#
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// After the session stopped (its capture with it): closes playback, logs what the canceller measured, and
    /// unloads `module-echo-cancel`. Capture must be stopped first: PulseAudio 16 hung unloading the module under
    /// a live recording stream (`PulseEchoCancelModule.unload`).
    func close() async {
        await capture.stop()
        await playback.close()
        if let cleaned, let figures = await cleaned.statistics() {
            logger.info("Echo cancellation measured", metadata: [
                "audio.aec.erleDb": "\(figures.echoReturnLossEnhancementDb.map(String.init) ?? "unknown")",
                "audio.aec.delayMs": "\(figures.delayMedianMs.map(String.init) ?? "unknown")",
            ])
        }
        if let module {
            do { try await PulseEchoCancelModule(logger: logger).unload(module) } catch {
                logger.error("Could not unload PulseAudio echo cancellation", metadata: ["audio.error": "\(error)"])
            }
        }
    }
}
