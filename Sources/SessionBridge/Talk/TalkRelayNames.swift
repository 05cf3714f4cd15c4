/// What a relay is for: transcripts of the user's speech, or a realtime voice that answers.
package enum TalkRelayMode: String, Sendable, Equatable {
    case transcription, realtime
}

/// The relay's method and event names, which changed across Gateway eras (fact sheet §9.8): chosen from
/// `hello-ok.features.methods`, never from the protocol number. A Gateway listing both (the transitional
/// era) gets the unified names.
package struct TalkRelayNames: Sendable, Equatable {
    package enum Era: String, Sendable { case unified, legacy }

    package let era: Era
    package let mode: TalkRelayMode
    package let create: String
    package let append: String
    package let close: String
    package let cancelOutput: String?
    package let acknowledgeMark: String?
    package let submitToolResult: String?
    package let toolCall: String?
    /// The control tool's verb (`talk.session.steer`), when listed.
    package var steer: String? = nil
    /// The key the session id travels under in requests.
    package let sessionKey: String
    package let event: String

    /// The names to use for `mode`, or nil when the Gateway lists no relay for it.
    package static func resolve(mode: TalkRelayMode, methods: [String]) -> TalkRelayNames? {
        let listed = Set(methods)
        func optional(_ name: String) -> String? { listed.contains(name) ? name : nil }
        if listed.contains("talk.session.create"), listed.contains("talk.session.appendAudio") {
            return TalkRelayNames(
                era: .unified, mode: mode, create: "talk.session.create", append: "talk.session.appendAudio",
                close: "talk.session.close",
                cancelOutput: mode == .realtime ? optional("talk.session.cancelOutput") : nil,
                acknowledgeMark: mode == .realtime ? optional("talk.session.acknowledgeMark") : nil,
                submitToolResult: mode == .realtime ? optional("talk.session.submitToolResult") : nil,
                toolCall: mode == .realtime ? optional("talk.client.toolCall") : nil,
                steer: mode == .realtime ? optional("talk.session.steer") : nil,
                sessionKey: "sessionId", event: "talk.event")
        }
        switch mode {
        case .realtime where listed.contains("talk.realtime.session") && listed.contains("talk.realtime.relayAudio"):
            return TalkRelayNames(
                era: .legacy, mode: mode, create: "talk.realtime.session", append: "talk.realtime.relayAudio",
                close: "talk.realtime.relayStop", cancelOutput: optional("talk.realtime.relayCancel"),
                acknowledgeMark: optional("talk.realtime.relayMark"),
                submitToolResult: optional("talk.realtime.relayToolResult"), toolCall: optional("talk.realtime.toolCall"),
                sessionKey: "relaySessionId", event: "talk.realtime.relay")
        case .transcription where listed.contains("talk.transcription.session") && listed.contains("talk.transcription.relayAudio"):
            return TalkRelayNames(
                era: .legacy, mode: mode, create: "talk.transcription.session", append: "talk.transcription.relayAudio",
                close: "talk.transcription.relayStop", cancelOutput: nil, acknowledgeMark: nil, submitToolResult: nil,
                toolCall: nil, sessionKey: "transcriptionSessionId", event: "talk.transcription.relay")
        default:
            return nil
        }
    }

    /// The create request's params for this era and mode; a realtime session asks for `talk.config`'s
    /// `talk.realtime` provider, model and voice (`realtime`), as the iOS app does.
    func createParams(sessionKey: String?, realtime: TalkRealtimeSelection? = nil) -> JSONValue {
        var params: [String: JSONValue] = [:]
        switch (era, mode) {
        case (.unified, .transcription):
            params = ["mode": "transcription", "transport": "gateway-relay", "brain": "none"]
        case (.unified, .realtime):
            params = ["mode": "realtime", "transport": "gateway-relay", "brain": "agent-consult"]
            if let sessionKey { params["sessionKey"] = .string(sessionKey) }
        case (.legacy, _):
            if let sessionKey { params["sessionKey"] = .string(sessionKey) }
        }
        if mode == .realtime, let realtime { params.merge(realtime.params) { current, _ in current } }
        return .object(params)
    }
}
