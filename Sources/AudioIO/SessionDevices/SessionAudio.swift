import Foundation
import TalkLogging

/// The microphone and the speaker of a Talk session, wrapped for echo cancellation as the mode asks: the session
/// gets a capture and a playback device and does not know which of these is behind them. `run` opens one; so does
/// any test or benchmark that wants a session's devices without the command line.
package struct SessionAudio: Sendable {
    package let capture: any AudioCaptureDevice
    package let playback: any AudioPlaybackDevice
    /// Which echo cancellation runs: `.webrtc`, `.pulse` or `.off` (never `.auto`).
    package let echoCancelMode: EchoCancelMode
    /// The same as the events, the log and the status show it (`pulse` with the module's number and devices).
    package let echoCancellation: String
    /// The output track of a paced file session, started with the session (`startTrack()`).
    private let track: ContinuousTrackSink?
    private let cleaned: EchoCancellingCapture?
    private let module: PulseEchoCancelModule.Loaded?
    private let server: String?
    private let logger: Logger

    package struct Request: Sendable {
        package var mode: EchoCancelMode
        package var devices: AudioDeviceChoice
        /// A folder the in-process canceller's input is recorded to when the session ends (`bench aec --replay`
        /// plays it back), for an echo problem seen on one machine (`OPENCLAW_TALK_AEC_RECORD`).
        package var aecRecord: String?
        /// The sound server's address; nil for libpulse's default (PULSE_SERVER, then the user's socket).
        package var server: String?

        package init(mode: EchoCancelMode, devices: AudioDeviceChoice, aecRecord: String? = nil, server: String? = nil) {
            (self.mode, self.devices, self.aecRecord, self.server) = (mode, devices, aecRecord, server)
        }

        /// The first rule the request breaks (`AudioDeviceChoice.conflict`, then the mode's), nil when it can open.
        package var conflict: AudioDeviceChoice.Conflict? { devices.conflict ?? mode.conflict(with: devices) }
    }

    /// Opens the devices. The devices are at the session's rate, 16 kHz. `pulse` loads `module-echo-cancel` here
    /// (undone by `close()`, and here when a later step fails).
    /// - Throws: `AudioDeviceChoice.Conflict` before anything opens; `PulseError` when the server refuses the module;
    ///   the output file's or the sound server's error.
    package static func open(_ request: Request, logger: Logger) async throws -> SessionAudio {
        if let conflict = request.conflict { throw conflict }
        let mode = request.mode.resolved
        var module: PulseEchoCancelModule.Loaded?
        var devices = request.devices
        if mode == .pulse {
            let loaded = try await PulseEchoCancelModule(server: request.server, logger: logger)
                .load(masterSink: devices.sink, masterSource: devices.source)
            (devices.source, devices.sink, module) = (loaded.source, loaded.sink, loaded)
        }
        let reference = mode == .webrtc ? EchoReference() : nil
        var capture = devices.capture(endlessSilence: true, server: request.server, logger: logger)
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
                playback = try devices.playback(sampleRate: 16_000, echoReference: reference, server: request.server, logger: logger)
            }
        } catch {
            if let module { try? await PulseEchoCancelModule(server: request.server, logger: logger).unload(module) }
            throw error
        }
        let description: String =
            switch mode {
            case .webrtc: "webrtc"
            case .pulse: "pulse (module-echo-cancel #\(module?.index ?? 0): \(devices.sink ?? "?"), \(devices.source ?? "?"))"
            case .auto, .off: "off"
            }
        logger.info("Echo cancellation", metadata: ["audio.aec": "\(description)"])
        return SessionAudio(
            capture: capture, playback: playback, echoCancelMode: mode, echoCancellation: description, track: track,
            cleaned: cleaned, module: module, server: request.server, logger: logger)
    }

    /// Starts a paced file session's output track; nothing for other speakers.
    package func startTrack() async { await track?.start() }

    /// After the session stopped (its capture with it): closes playback, logs what the canceller measured, and
    /// unloads `module-echo-cancel`. Capture is stopped first: PulseAudio 16 hung unloading the module under a live
    /// recording stream (`PulseEchoCancelModule.unload`).
    package func close() async {
        await capture.stop()
        await playback.close()
        if let cleaned, let figures = await cleaned.statistics() {
            logger.info("Echo cancellation measured", metadata: [
                "audio.aec.erleDb": "\(figures.echoReturnLossEnhancementDb.map(String.init) ?? "unknown")",
                "audio.aec.delayMs": "\(figures.delayMedianMs.map(String.init) ?? "unknown")",
            ])
        }
        if let module {
            do { try await PulseEchoCancelModule(server: server, logger: logger).unload(module) } catch {
                logger.error("Could not unload PulseAudio echo cancellation", metadata: ["audio.error": "\(error)"])
            }
        }
    }
}
