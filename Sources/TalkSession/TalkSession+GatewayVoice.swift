import SessionBridge
import SpeechSynthesis

/// The voice `talk.speak` is asked for: `talk.config`'s voice and model, a reply's voice directive over them.
extension TalkSession {
    /// The Gateway voice settings for a reply with this directive. Without `once` the directive's voice and model
    /// become the session's default for later replies (gateway-protocol.md §4.5).
    func gatewayVoice(for directive: VoiceDirective?) -> TalkVoiceSettings {
        let base = settings.gatewayVoice.overridden(by: settings.sessionVoice)
        guard let directive else { return base }
        let asked = TalkVoiceSettings(directive: directive)
        if !directive.once {
            settings.sessionVoice.voiceId = asked.voiceId ?? settings.sessionVoice.voiceId
            settings.sessionVoice.modelId = asked.modelId ?? settings.sessionVoice.modelId
        }
        return base.overridden(by: asked)
    }

    /// `talk.config`'s voice and model (a directive without `once` still goes over them).
    func applyGatewayVoice(_ config: TalkConfig) {
        settings.gatewayVoice.voiceId = config.voiceId
        settings.gatewayVoice.modelId = config.modelId
    }
}

extension TalkVoiceSettings {
    /// What a reply's voice directive asks of the Gateway's voice (`TalkVoiceSettings.params` drops what is out of range).
    init(directive d: VoiceDirective) {
        self.init(
            voiceId: d.voice, modelId: d.model, outputFormat: d.outputFormat, speed: d.speed, rateWpm: d.rateWPM,
            stability: d.stability, similarity: d.similarity, style: d.style, speakerBoost: d.speakerBoost, seed: d.seed,
            normalize: d.normalize, language: d.language, latencyTier: d.latencyTier)
    }
}
