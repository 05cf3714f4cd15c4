/// A PulseAudio source (microphone, monitor) or sink (speaker) as the server describes it.
package struct PulseDevice: Sendable, Codable, Equatable {
    package var kind: PulseDeviceKind
    /// The name to pass as `--source` / `--sink`.
    package var name: String
    package var description: String
    /// libpulse's name for the sample format, e.g. `s16le`, `float32le`.
    package var sampleFormat: String
    package var sampleRate: Int
    package var channels: Int
    /// The server's default for its kind.
    package var isDefault: Bool
    /// For a monitor source, the sink it listens to.
    package var monitorOfSink: String?

    package init(
        kind: PulseDeviceKind, name: String, description: String, sampleFormat: String, sampleRate: Int,
        channels: Int, isDefault: Bool, monitorOfSink: String? = nil
    ) {
        self.kind = kind
        self.name = name
        self.description = description
        self.sampleFormat = sampleFormat
        self.sampleRate = sampleRate
        self.channels = channels
        self.isDefault = isDefault
        self.monitorOfSink = monitorOfSink
    }

    /// "s16le 16000 Hz 1ch", as pactl prints it.
    package var sampleSpecText: String { "\(sampleFormat) \(sampleRate) Hz \(channels)ch" }
}
