import CPulse
import Foundation

/// What went wrong talking to PulseAudio; each case says what failed and what to do about it.
package enum PulseError: Error, Equatable, CustomStringConvertible {
    /// No server answered at `server` (the address tried: PULSE_SERVER or the default socket).
    case serverUnreachable(server: String, reason: String)
    /// The named source or sink does not exist; `available` lists the names that do.
    case deviceNotFound(kind: PulseDeviceKind, name: String, available: [String])
    /// The server refused or dropped a stream.
    case streamFailed(device: String, reason: String)
    /// Playback was cut off by the server going away or the sink vanishing.
    case playbackInterrupted(device: String, reason: String)
    /// The audio handed to playback cannot be played (e.g. a sample rate PulseAudio does not take).
    case invalidAudio(reason: String)
    /// libpulse itself failed (out of memory, thread creation).
    case internalFailure(what: String)
    /// The server would not load or unload a module.
    case moduleFailed(module: String, reason: String)

    package var description: String {
        switch self {
        case .serverUnreachable(let server, let reason):
            return "No PulseAudio server at \(server) (\(reason)). Is pulseaudio (or pipewire-pulse) running? "
                + "Start it with 'pulseaudio --start', or set PULSE_SERVER to the address of a running server."
        case .deviceNotFound(let kind, let name, let available):
            let list = available.isEmpty ? "none" : available.joined(separator: ", ")
            return "No PulseAudio \(kind) named '\(name)'. Available: \(list). "
                + "Run 'openclaw-talk devices' to list them, or leave the name out to use the default."
        case .streamFailed(let device, let reason):
            return "PulseAudio refused the stream on '\(device)': \(reason)."
        case .playbackInterrupted(let device, let reason):
            return "Playback on '\(device)' was interrupted: \(reason). "
                + "The next playback reconnects by itself once the sound server is back."
        case .invalidAudio(let reason):
            return "Cannot play this audio: \(reason)."
        case .internalFailure(let what):
            return "PulseAudio client failure: \(what)."
        case .moduleFailed(let module, let reason):
            return "PulseAudio could not load or unload \(module): \(reason). "
                + "Is the module installed (pulseaudio's modules folder) and the server one that loads modules?"
        }
    }

    /// The address a client without an explicit server tries, in words fit for an error message.
    static func describe(server: String?) -> String {
        if let server, !server.isEmpty { return server }
        let env = ProcessInfo.processInfo.environment
        if let value = env["PULSE_SERVER"], !value.isEmpty { return value }
        let runtime = env["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user/\(getuid())"
        return "unix:\(runtime)/pulse/native (the default socket; PULSE_SERVER is not set)"
    }

    /// libpulse's sentence for an error code.
    static func text(_ code: Int32) -> String {
        pa_strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }
}

/// Sources capture, sinks play.
package enum PulseDeviceKind: String, Sendable, Codable, Equatable, CustomStringConvertible {
    case source, sink
    package var description: String { rawValue }
}
