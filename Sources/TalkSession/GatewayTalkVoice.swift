import AudioIO
import SessionBridge

/// The Gateway's voice for the loop: `talk.speak` (or `tts.speak`) through `TalkSpeechClient`, the clip decoded
/// on a thread of its own. This joins SessionBridge and AudioIO, which may not import each other.
package struct GatewayTalkVoice: GatewayVoice {
    package let client: TalkSpeechClient

    package init(client: TalkSpeechClient) {
        self.client = client
    }

    package func speak(_ text: String, voice: TalkVoiceSettings) async -> GatewaySpeech {
        do {
            switch try await client.speak(text, voice: voice) {
            case .useLocalVoice(let reason):
                return .useLocalVoice(reason: reason.description)
            case .clip(let clip):
                // The container SessionBridge decided from outputFormat, mimeType, fileExtension and the bytes, in that order.
                let pcm = try await AudioClipDecoder.decodeOffPool(clip.audio, container: Self.container(clip.format))
                guard !pcm.samples.isEmpty else { return .useLocalVoice(reason: "the Gateway's clip held no audio") }
                return .audio(pcm)
            }
        } catch {
            return .useLocalVoice(reason: "the Gateway's voice failed: \(error)")
        }
    }

    static func container(_ format: TalkClipFormat) -> AudioClipDecoder.Container {
        switch format {
        case .pcm(let rate): .pcm16(rate: rate)
        case .oggOpus: .oggOpus
        case .wav: .wav
        case .mp3: .mp3
        }
    }
}
