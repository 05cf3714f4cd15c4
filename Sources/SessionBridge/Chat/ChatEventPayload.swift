/// One `chat` event's payload (fact sheet §4.3), checked: every field the reply follows has the right
/// type, and no text is larger than a reply that can be spoken.
package struct ChatEventPayload: Sendable, Equatable {
    package enum State: String, Sendable, Equatable {
        case delta, final, aborted, error
    }

    package var runId: String
    package var sessionKey: String
    /// The run's own sequence (not the frame's per-socket `seq`).
    package var seq: Int64
    package var state: State
    /// `deltaText`: appended, or replacing the text when `replace` is true.
    package var deltaText: String?
    package var replace: Bool
    /// The text of `message` (a cumulative snapshot on deltas, the whole reply on `final`).
    package var messageText: String?
    package var errorMessage: String?
    package var errorKind: String?
    package var stopReason: String?

    /// Text beyond this many UTF-8 bytes is refused: no spoken reply is that long, and a hostile
    /// Gateway must not make us hold (and later synthesise) megabytes.
    package static let maxTextBytes = 256 * 1024
    /// Ids, keys and kinds are short (`chat.send` caps session keys at 512).
    package static let maxIdBytes = 512

    /// Parses a `chat` payload; a malformed one throws, saying which field was wrong.
    package init(json: JSONValue?) throws(ChatPayloadError) {
        guard let json, case .object = json else { throw .notAnObject }
        runId = try Self.string(json, "runId", required: true, limit: Self.maxIdBytes) ?? ""
        sessionKey = try Self.string(json, "sessionKey", required: true, limit: Self.maxIdBytes) ?? ""
        guard let seqValue = json["seq"] else { throw .missingField("seq") }
        guard let seq = seqValue.intValue, seq >= 0 else { throw .wrongType(field: "seq", expected: "integer >= 0") }
        self.seq = seq
        guard let stateText = try Self.string(json, "state", required: true) else { throw .missingField("state") }
        guard let state = State(rawValue: stateText) else { throw .wrongType(field: "state", expected: "delta, final, aborted or error") }
        self.state = state
        deltaText = try Self.string(json, "deltaText", required: false, empty: true)
        if let r = json["replace"], r != .null {
            guard let b = r.boolValue else { throw .wrongType(field: "replace", expected: "boolean") }
            replace = b
        } else {
            replace = false
        }
        if let m = json["message"], m != .null { messageText = try Self.messageText(m, field: "message") } else { messageText = nil }
        errorMessage = try Self.string(json, "errorMessage", required: false, empty: true)
        errorKind = try Self.string(json, "errorKind", required: false, limit: Self.maxIdBytes)
        stopReason = try Self.string(json, "stopReason", required: false, limit: Self.maxIdBytes)
    }

    /// The text of a `message`: a string, or `{role, content: string | [{type: "text", text}]}` whose
    /// text parts are joined with newlines (other part types, e.g. tool calls, are not spoken).
    package static func messageText(_ value: JSONValue, field: String) throws(ChatPayloadError) -> String {
        let text: String
        switch value {
        case .string(let s): text = s
        case .object:
            switch value["content"] {
            case .string(let s)?: text = s
            case .array(let parts)?:
                var pieces: [String] = []
                for part in parts where part["type"]?.stringValue == "text" {
                    guard let t = part["text"]?.stringValue else { throw .wrongType(field: field + ".content[].text", expected: "string") }
                    pieces.append(t)
                }
                text = pieces.joined(separator: "\n")
            case nil, .null?: text = ""
            default: throw .wrongType(field: field + ".content", expected: "string or array of parts")
            }
        default: throw .wrongType(field: field, expected: "string or message object")
        }
        guard text.utf8.count <= maxTextBytes else { throw .tooLarge(field: field, bytes: text.utf8.count) }
        return text
    }

    private static func string(_ json: JSONValue, _ field: String, required: Bool, empty: Bool = false,
                               limit: Int = maxTextBytes) throws(ChatPayloadError) -> String? {
        guard let value = json[field], value != .null else {
            if required { throw .missingField(field) }
            return nil
        }
        guard let s = value.stringValue, empty || !s.isEmpty else { throw .wrongType(field: field, expected: empty ? "string" : "non-empty string") }
        guard s.utf8.count <= limit else { throw .tooLarge(field: field, bytes: s.utf8.count) }
        return s
    }
}

/// Why a `chat` payload or a `chat.history` row was not used.
package enum ChatPayloadError: Error, Equatable, CustomStringConvertible {
    case notAnObject
    case missingField(String)
    case wrongType(field: String, expected: String)
    case tooLarge(field: String, bytes: Int)

    package var description: String {
        switch self {
        case .notAnObject: "The Gateway sent a chat payload that is not an object; it was ignored."
        case .missingField(let f): "The Gateway sent a chat payload without '\(f)'; it was ignored."
        case .wrongType(let f, let t): "The Gateway sent a chat payload whose '\(f)' is not a \(t); it was ignored."
        case .tooLarge(let f, let n):
            "The Gateway sent a chat payload whose '\(f)' holds \(n) bytes, more than a reply can be; it was ignored."
        }
    }
}
