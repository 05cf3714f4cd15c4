/// How a Talk session keeps the reply's echo out of the microphone (`run --aec`).
package enum EchoCancelMode: String, CaseIterable, Sendable {
    /// The default: in-process WebRTC echo cancellation.
    case auto
    /// `EchoCancellingCapture` cleans every captured frame against what playback hands to the speaker.
    case webrtc
    /// PulseAudio's `module-echo-cancel`, loaded over the sink and source for the session.
    case pulse
    case off

    /// What `auto` stands for.
    package var resolved: EchoCancelMode { self == .auto ? .webrtc : self }

    /// Why the mode cannot run over `devices`, nil when it can: `pulse` needs a sound server's devices at both ends
    /// (the module sits between a sink and a source).
    package func conflict(with devices: AudioDeviceChoice) -> AudioDeviceChoice.Conflict? {
        self == .pulse && !devices.bothOnServer ? .serverEchoCancelOverFile : nil
    }
}
