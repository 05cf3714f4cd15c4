/// The sound servers a benchmark runs on: PulseAudio, or PipeWire with its Pulse server (what most desktops run).
package enum SoundServerKind: String, Sendable, CaseIterable {
    case pulse, pipewire
}
