/// The Talk settings the loop reads: what the Gateway's `talk.config` says (fact sheet §4.6, §4.4), over
/// built-in defaults, under local settings. Each field is optional so layers merge: a nil field takes
/// the value from the layer below (`builtIn.merging(gateway).merging(local)`).
package struct TalkConfig: Sendable, Equatable {
    /// Pause after speech before the transcript is sent.
    package var silenceTimeoutMs: Int?
    /// Whether speech while a reply plays stops it (barge-in).
    package var interruptOnSpeech: Bool?
    /// The active speech provider (e.g. `elevenlabs`, `system`): `talk.resolved.provider`, else `talk.provider`.
    package var provider: String?
    /// The provider's voice and model: `talk.resolved.config` first (what the Gateway resolved, as the Apple apps
    /// read it: TalkConfigParsing.swift), else `talk.providers.<provider>` (Gateways before `resolved`).
    package var voiceId: String?
    package var modelId: String?
    package var outputFormat: String?
    /// Seconds without speech after which Talk goes idle (no default on any client).
    package var idleTimeoutS: Double?
    package var speechLocale: String?
    /// `session.mainKey`: the session when `hello-ok` names none.
    package var sessionMainKey: String?
    /// `talk.realtime`'s provider, model and voice: what a realtime relay session is created with.
    package var realtime: TalkRealtimeSelection?

    package init(silenceTimeoutMs: Int? = nil, interruptOnSpeech: Bool? = nil, provider: String? = nil, voiceId: String? = nil,
                 modelId: String? = nil, outputFormat: String? = nil, idleTimeoutS: Double? = nil, speechLocale: String? = nil,
                 sessionMainKey: String? = nil, realtime: TalkRealtimeSelection? = nil) {
        self.silenceTimeoutMs = silenceTimeoutMs
        self.interruptOnSpeech = interruptOnSpeech
        self.provider = provider
        self.voiceId = voiceId
        self.modelId = modelId
        self.outputFormat = outputFormat
        self.idleTimeoutS = idleTimeoutS
        self.speechLocale = speechLocale
        self.sessionMainKey = sessionMainKey
        self.realtime = realtime
    }

    /// What applies when neither the Gateway nor the user says otherwise (macOS/Android values).
    package static let builtIn = TalkConfig(silenceTimeoutMs: 700, interruptOnSpeech: true)

    /// This layer with `override`'s non-nil fields on top.
    package func merging(_ override: TalkConfig) -> TalkConfig {
        TalkConfig(
            silenceTimeoutMs: override.silenceTimeoutMs ?? silenceTimeoutMs,
            interruptOnSpeech: override.interruptOnSpeech ?? interruptOnSpeech,
            provider: override.provider ?? provider, voiceId: override.voiceId ?? voiceId,
            modelId: override.modelId ?? modelId, outputFormat: override.outputFormat ?? outputFormat,
            idleTimeoutS: override.idleTimeoutS ?? idleTimeoutS, speechLocale: override.speechLocale ?? speechLocale,
            sessionMainKey: override.sessionMainKey ?? sessionMainKey, realtime: override.realtime ?? realtime)
    }

    /// Values the Gateway redacts when secrets were not asked for.
    static let redacted = "__OPENCLAW_REDACTED__"

    /// Reads a `talk.config` result. Fields of the wrong type or out of range are left out (and named
    /// in `ignored`), never fatal: a Gateway's odd config must not stop Talk.
    package init(gatewayResult result: JSONValue?, ignored: inout [String]) {
        self.init()
        let talk = result?["config"]?["talk"]
        func text(_ v: JSONValue?, _ name: String) -> String? {
            guard let v, v != .null else { return nil }
            guard let s = v.stringValue, !s.isEmpty, s != Self.redacted, s.utf8.count <= 256 else {
                ignored.append(name)
                return nil
            }
            return s
        }
        if let v = talk?["silenceTimeoutMs"], v != .null {
            if let n = v.intValue, (1...60_000).contains(n) { silenceTimeoutMs = Int(n) } else { ignored.append("silenceTimeoutMs") }
        }
        if let v = talk?["interruptOnSpeech"], v != .null {
            if let b = v.boolValue { interruptOnSpeech = b } else { ignored.append("interruptOnSpeech") }
        }
        if let v = talk?["idleTimeoutS"], v != .null {
            let seconds: Double? = switch v {
            case .int(let i): Double(i)
            case .double(let d): d
            default: nil
            }
            if let seconds, seconds > 0, seconds <= 86_400 { idleTimeoutS = seconds } else { ignored.append("idleTimeoutS") }
        }
        // `resolved` first, as the Apple apps read it (apps/shared/OpenClawKit TalkConfigParsing.swift
        // selectProviderConfig): the Gateway's own choice of provider and its config (src/config/talk.ts
        // buildTalkConfigResponse); `provider`/`providers` only for what it leaves out.
        provider = text(talk?["resolved"]?["provider"], "resolved.provider") ?? text(talk?["provider"], "provider")
        let providerConfig = provider.flatMap { talk?["providers"]?[$0] }
        let resolved = talk?["resolved"]?["config"]
        func field(_ names: String...) -> String? {
            for name in names { if let value = text(resolved?[name], "resolved.\(name)") { return value } }
            for name in names { if let value = text(providerConfig?[name], name) { return value } }
            return nil
        }
        voiceId = field("voiceId", "voice")
        modelId = field("modelId", "model")
        outputFormat = field("outputFormat")
        realtime = TalkRealtimeSelection(talk?["realtime"], ignored: &ignored)
        speechLocale = text(talk?["speechLocale"], "speechLocale")
        sessionMainKey = text(result?["config"]?["session"]?["mainKey"], "session.mainKey")
    }
}
