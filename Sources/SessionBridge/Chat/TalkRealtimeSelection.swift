import Foundation

/// What `talk.config`'s `talk.realtime` says a realtime relay session should use: the provider, its model and its
/// voice, passed to `talk.session.create` (or the legacy `talk.realtime.session`) as the iOS app does
/// (apps/ios/Sources/Voice/TalkModeGatewayConfig.swift `realtimeRelayConfig`). The Gateway serves `talk.realtime`
/// as configured (src/config/talk.ts `buildTalkConfigResponse`).
package struct TalkRealtimeSelection: Sendable, Equatable {
    package var provider: String?
    package var model: String?
    package var voice: String?

    package init(provider: String? = nil, model: String? = nil, voice: String? = nil) {
        self.provider = provider
        self.model = model
        self.voice = voice
    }

    /// Read as the iOS app reads it: `provider`, else the only key of `providers`; `model` and `voice` at the top
    /// level first, then in that provider's entry (exact key, then case-insensitive, then the only entry). Values
    /// of the wrong type or longer than 256 bytes are left out and named in `ignored`. Nil when nothing is chosen.
    package init?(_ realtime: JSONValue?, ignored: inout [String]) {
        guard let realtime, realtime != .null else { return nil }
        guard case .object = realtime else {
            ignored.append("realtime")
            return nil
        }
        func text(_ value: JSONValue?, _ name: String) -> String? {
            guard let value, value != .null else { return nil }
            guard let s = value.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines), s.utf8.count <= 256,
                  s != TalkConfig.redacted
            else {
                ignored.append("realtime.\(name)")
                return nil
            }
            return s.isEmpty ? nil : s
        }
        func first(_ object: JSONValue?, _ names: [String]) -> String? {
            for name in names { if let value = text(object?[name], name) { return value } }
            return nil
        }
        let entries: [String: JSONValue] = if case .object(let o)? = realtime["providers"] { o } else { [:] }
        let provider = text(realtime["provider"], "provider") ?? (entries.count == 1 ? entries.keys.first : nil)
        let entry: JSONValue? =
            if let provider {
                entries[provider] ?? entries.first { $0.key.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare(provider) == .orderedSame }?.value
            } else {
                entries.count == 1 ? entries.values.first : nil
            }
        self.provider = provider.flatMap { $0.utf8.count <= 256 ? $0 : nil }
        model = first(realtime, ["model", "modelId"]) ?? first(entry, ["model", "modelId"])
        voice = first(realtime, ["voice", "voiceId", "speakerVoice", "speakerVoiceId"])
            ?? first(entry, ["voice", "voiceId", "speakerVoice", "speakerVoiceId"])
        if self.provider == nil, model == nil, voice == nil { return nil }
    }

    /// The create request's fields for these choices.
    var params: [String: JSONValue] {
        var params: [String: JSONValue] = [:]
        if let provider { params["provider"] = .string(provider) }
        if let model { params["model"] = .string(model) }
        if let voice { params["voice"] = .string(voice) }
        return params
    }
}
