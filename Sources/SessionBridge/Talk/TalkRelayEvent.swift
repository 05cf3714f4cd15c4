import Foundation

/// One relay event (`talk.event`, or the older `talk.realtime.relay` / `talk.transcription.relay`), as the
/// fact sheet §5.3 and §9.4 give its payload: the session it belongs to, what happened, and the turn the
/// canonical `talkEvent` envelope names (absent in the older era).
package struct TalkRelayEvent: Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        case ready
        case speechStart
        case inputAudio(byteLength: Int)
        /// The running hypothesis of the current utterance: replaces the previous one.
        case partial(String)
        /// A transcript; for transcription `role` is nil. Empty-text finals (turn ended / committed) are
        /// markers, never transcripts.
        case transcript(role: String?, text: String, final: Bool)
        case audio([UInt8], itemId: String?)
        /// The output's audio is over: of the provider's item `itemId` (upstream sends one naming none after a
        /// response's end).
        case audioDone(itemId: String?)
        case clear
        case mark(String)
        case toolCall(callId: String, name: String, args: JSONValue, itemId: String?)
        case toolResult(callId: String)
        case error(String)
        case closed(reason: String)
        /// A type this client does not act on (`toolProgress`, newer ones).
        case other(String)
    }

    package var sessionId: String
    package var kind: Kind
    package var turnId: String?
    /// `talkEvent.type` (`turn.ended`, `input.audio.committed` ...), when the envelope is there.
    package var talkEventType: String?

    package init(sessionId: String, kind: Kind, turnId: String? = nil, talkEventType: String? = nil) {
        self.sessionId = sessionId
        self.kind = kind
        self.turnId = turnId
        self.talkEventType = talkEventType
    }

    /// The event names relay events travel under, in every era.
    package static let eventNames: Set<String> = ["talk.event", "talk.realtime.relay", "talk.transcription.relay"]

    /// Reads one payload. A payload that is not an object, has no session id or type, or lacks a field its
    /// type needs is an error saying which; the caller logs it and goes on.
    package static func parse(_ payload: JSONValue?) throws(TalkRelayEventError) -> TalkRelayEvent {
        guard let payload, case .object = payload else { throw .malformed("the payload is not an object") }
        let envelope = payload["talkEvent"]
        guard let sessionId = payload["relaySessionId"]?.stringValue ?? payload["transcriptionSessionId"]?.stringValue
            ?? envelope?["sessionId"]?.stringValue, !sessionId.isEmpty
        else { throw .malformed("no relaySessionId or transcriptionSessionId") }
        guard let type = payload["type"]?.stringValue else { throw .malformed("no type") }
        func text(_ key: String) throws(TalkRelayEventError) -> String {
            guard let value = payload[key]?.stringValue else { throw .malformed("\(type) without a string \(key)") }
            return value
        }
        let kind: Kind
        switch type {
        case "ready": kind = .ready
        case "speechStart": kind = .speechStart
        case "inputAudio": kind = .inputAudio(byteLength: Int(payload["byteLength"]?.intValue ?? 0))
        case "partial": kind = .partial(try text("text"))
        case "transcript":
            guard let final = payload["final"]?.boolValue ?? (payload["final"] == nil ? false : nil) else {
                throw .malformed("transcript with a final that is not a boolean")
            }
            kind = .transcript(role: payload["role"]?.stringValue, text: try text("text"), final: final)
        case "audio":
            guard let bytes = Data(base64Encoded: try text("audioBase64")) else { throw .malformed("audio that is not base64") }
            kind = .audio([UInt8](bytes), itemId: payload["itemId"]?.stringValue)
        case "audioDone": kind = .audioDone(itemId: payload["itemId"]?.stringValue)
        case "clear": kind = .clear
        case "mark": kind = .mark(try text("markName"))
        case "toolCall":
            kind = .toolCall(callId: try text("callId"), name: try text("name"), args: payload["args"] ?? .object([:]),
                             itemId: payload["itemId"]?.stringValue)
        case "toolResult": kind = .toolResult(callId: try text("callId"))
        case "error": kind = .error(payload["message"]?.stringValue ?? "the relay reported an error")
        case "close": kind = .closed(reason: payload["reason"]?.stringValue ?? "completed")
        default: kind = .other(String(type.prefix(64)))
        }
        return TalkRelayEvent(sessionId: sessionId, kind: kind, turnId: envelope?["turnId"]?.stringValue,
                              talkEventType: envelope?["type"]?.stringValue)
    }
}

package enum TalkRelayEventError: Error, Equatable, CustomStringConvertible {
    case malformed(String)

    package var description: String {
        switch self {
        case .malformed(let why): "malformed relay event: \(why)"
        }
    }
}
