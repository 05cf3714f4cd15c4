import Foundation

/// The voice `talk.speak` is asked for: from Talk config, or from a reply's voice directive (parsed once, by
/// SpeechSynthesis's `VoiceDirective`). Values outside the ranges the providers accept are dropped rather than
/// sent, so a bad directive falls back to the Gateway's default instead of failing the request.
package struct TalkVoiceSettings: Sendable, Equatable {
    package var voiceId: String?
    package var modelId: String?
    package var outputFormat: String?
    /// 0.5...2 (ElevenLabs).
    package var speed: Double?
    /// Words per minute; the Gateway maps it to speed = WPM / 175, which must land in (0.5, 2).
    package var rateWpm: Int?
    package var stability: Double?
    package var similarity: Double?
    package var style: Double?
    package var speakerBoost: Bool?
    package var seed: Int?
    package var normalize: String?
    package var language: String?
    /// 0...4.
    package var latencyTier: Int?

    package init(
        voiceId: String? = nil, modelId: String? = nil, outputFormat: String? = nil, speed: Double? = nil,
        rateWpm: Int? = nil, stability: Double? = nil, similarity: Double? = nil, style: Double? = nil,
        speakerBoost: Bool? = nil, seed: Int? = nil, normalize: String? = nil, language: String? = nil,
        latencyTier: Int? = nil
    ) {
        self.voiceId = voiceId
        self.modelId = modelId
        self.outputFormat = outputFormat
        self.speed = speed
        self.rateWpm = rateWpm
        self.stability = stability
        self.similarity = similarity
        self.style = style
        self.speakerBoost = speakerBoost
        self.seed = seed
        self.normalize = normalize
        self.language = language
        self.latencyTier = latencyTier
    }

    /// These settings with every value `other` sets taking over (a directive over the config).
    package func overridden(by other: TalkVoiceSettings) -> TalkVoiceSettings {
        TalkVoiceSettings(
            voiceId: other.voiceId ?? voiceId, modelId: other.modelId ?? modelId,
            outputFormat: other.outputFormat ?? outputFormat, speed: other.speed ?? speed,
            rateWpm: other.rateWpm ?? rateWpm, stability: other.stability ?? stability,
            similarity: other.similarity ?? similarity, style: other.style ?? style,
            speakerBoost: other.speakerBoost ?? speakerBoost, seed: other.seed ?? seed,
            normalize: other.normalize ?? normalize, language: other.language ?? language,
            latencyTier: other.latencyTier ?? latencyTier)
    }

    /// `TalkSpeakParams` for `text`, with only the values in range.
    package func params(text: String) -> JSONValue {
        var o: [String: JSONValue] = ["text": .string(text)]
        for (key, value) in [("voiceId", voiceId), ("modelId", modelId), ("outputFormat", outputFormat),
                             ("normalize", normalize), ("language", language)] {
            if let value = value.flatMap(Self.bounded) { o[key] = .string(value) }
        }
        for (key, value, range) in [("speed", speed, 0.5...2.0), ("stability", stability, 0...1),
                                    ("similarity", similarity, 0...1), ("style", style, 0...1)] {
            if let value, range.contains(value) { o[key] = .double(value) }
        }
        if let rateWpm, rateWpm > 0, (0.5...2.0).contains(Double(rateWpm) / 175) { o["rateWpm"] = .int(Int64(rateWpm)) }
        if let speakerBoost { o["speakerBoost"] = .bool(speakerBoost) }
        if let seed, seed >= 0 { o["seed"] = .int(Int64(seed)) }
        if let latencyTier, (0...4).contains(latencyTier) { o["latencyTier"] = .int(Int64(latencyTier)) }
        return .object(o)
    }

    /// A setting string worth sending: not empty, and not so long it can only be hostile.
    private static func bounded(_ s: String) -> String? {
        let t = s.trimmingCharacters(in: .whitespaces)
        return t.isEmpty || t.utf8.count > 256 ? nil : t
    }
}
