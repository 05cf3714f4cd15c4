import Foundation
import Testing

/// The Pulse server the tests run against: PulseAudio itself (`scripts/with-pulse.sh`, the default) or
/// PipeWire's pipewire-pulse (`scripts/with-pipewire.sh`, `make test-pipewire`, which sets
/// `OPENCLAW_TALK_SOUND_SERVER=pipewire`). Suites that start servers of their own start this kind.
package enum SoundServer: String, Sendable {
    case pulseaudio
    case pipewire

    package static let current: SoundServer =
        TestInputs.environment["OPENCLAW_TALK_SOUND_SERVER"].flatMap { SoundServer(rawValue: $0.lowercased()) } ?? .pulseaudio
}

extension Trait where Self == ConditionTrait {
    /// Skips the test against PipeWire, visibly and with the reason: for what only PulseAudio does.
    package static func pulseAudioOnly(_ reason: String) -> Self {
        .disabled(if: SoundServer.current == .pipewire, Comment(rawValue: "PulseAudio only: \(reason)"))
    }
}
