import SessionBridge
import SpeechSynthesis

/// The voices replies are spoken in, as they change while the session runs: `talk.config` (the Gateway's voice on or
/// off, its voice and model), a reloaded configuration (the local voice and rate), and a reply's voice directive
/// (without `once`, its Gateway voice and model stay for later replies, gateway-protocol.md §4.5). A value with no
/// I/O; `Settings` is read once, as the session starts.
struct ReplyVoices: Sendable, Equatable {
    /// The local voice; flags (`fixed`) beat a reply's directive for what they gave.
    var local: VoiceSettings
    var localVoiceFixed: Bool
    var rateFixed: Bool
    /// Speak with the Gateway's voice (`talk.config` names a provider, and the session has one).
    var useGateway: Bool
    /// `talk.config`'s voice and model.
    var gateway: TalkVoiceSettings
    /// What a directive without `once` left, over `gateway` for the rest of the session.
    var session: TalkVoiceSettings

    init(_ settings: TalkSession.Settings) {
        local = settings.voice
        localVoiceFixed = settings.voiceFixed
        rateFixed = settings.rateFixed
        useGateway = settings.useGatewayVoice
        gateway = settings.gatewayVoice
        session = settings.sessionVoice
    }

    /// `talk.config`: the Gateway's voice, its voice and model (a directive without `once` still goes over them).
    mutating func apply(_ config: TalkConfig, gatewayVoiceAvailable: Bool) {
        useGateway = config.provider != nil && gatewayVoiceAvailable
        gateway.voiceId = config.voiceId
        gateway.modelId = config.modelId
    }

    /// A reloaded configuration's voice and rate: they beat a directive from now on.
    mutating func reload(voice: String?, rate: Int?) {
        if let voice {
            local.voice = voice
            localVoiceFixed = true
        }
        if let rate {
            local.rateWPM = rate
            rateFixed = true
        }
    }

    /// The local and Gateway voices for a reply with this directive (nil: none). Without `once` the directive's
    /// Gateway voice and model become the session's default for later replies.
    mutating func forReply(_ directive: VoiceDirective?) -> (local: VoiceSettings, gateway: TalkVoiceSettings) {
        let base = gateway.overridden(by: session)
        guard let directive else { return (local, base) }
        let asked = TalkVoiceSettings(directive: directive)
        if !directive.once {
            session.voiceId = asked.voiceId ?? session.voiceId
            session.modelId = asked.modelId ?? session.modelId
        }
        var voice = directive.applied(to: local)
        if localVoiceFixed { voice.voice = local.voice }
        if rateFixed { voice.rateWPM = local.rateWPM }
        return (voice, base.overridden(by: asked))
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
