/// A frame received from the Gateway: a response to one of our requests, or an event.
package enum GatewayFrame: Sendable, Equatable {
    case response(Response)
    case event(Event)

    /// `{type:"res", id, ok, payload?, error?}`.
    package struct Response: Sendable, Equatable {
        package var id: String
        package var ok: Bool
        package var payload: JSONValue?
        package var error: GatewayErrorShape?
    }

    /// `{type:"event", event, payload?, seq?}`.
    package struct Event: Sendable, Equatable {
        package var name: String
        package var payload: JSONValue?
        package var seq: Int64?

        package init(name: String, payload: JSONValue?, seq: Int64? = nil) {
            self.name = name
            self.payload = payload
            self.seq = seq
        }
    }

    /// Parses one WebSocket message (text or binary JSON). Anything that is not a well-formed
    /// response or event gives a `FrameError` naming what was wrong.
    package static func parse(_ bytes: [UInt8]) throws(FrameError) -> GatewayFrame {
        guard !bytes.isEmpty else { throw .empty }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .invalidUTF8 }
        guard let json = JSONValue.parse(bytes) else { throw .invalidJSON }
        guard case .object(let o) = json else { throw .notAnObject }
        guard let typeValue = o["type"] else { throw .missingField("type") }
        guard let type = typeValue.stringValue else { throw .wrongType(field: "type", expected: "string") }
        switch type {
        case "res":
            guard let id = o["id"]?.stringValue, !id.isEmpty else { throw .missingField("id") }
            guard let ok = o["ok"]?.boolValue else { throw .wrongType(field: "ok", expected: "boolean") }
            var error: GatewayErrorShape?
            if let e = o["error"], e != .null {
                guard let shape = GatewayErrorShape(json: e) else { throw .wrongType(field: "error", expected: "ErrorShape") }
                error = shape
            }
            if !ok, error == nil { throw .missingField("error") }
            return .response(Response(id: id, ok: ok, payload: o["payload"], error: error))
        case "event":
            guard let name = o["event"]?.stringValue, !name.isEmpty else { throw .missingField("event") }
            var seq: Int64?
            if let s = o["seq"] {
                guard let n = s.intValue, n >= 0 else { throw .wrongType(field: "seq", expected: "integer >= 0") }
                seq = n
            }
            return .event(Event(name: name, payload: o["payload"], seq: seq))
        default:
            throw .unknownType(String(type.prefix(40)))
        }
    }

    /// The text of a request frame `{type:"req", id, method, params}`.
    package static func request(id: String, method: String, params: JSONValue?) -> String {
        var o: [String: JSONValue] = ["type": "req", "id": .string(id), "method": .string(method)]
        if let params { o["params"] = params }
        return JSONValue.object(o).jsonText
    }
}

/// The Gateway's `ErrorShape`: `{code, message, details?, retryable?, retryAfterMs?}`.
package struct GatewayErrorShape: Sendable, Equatable, CustomStringConvertible {
    package var code: String
    package var message: String
    package var details: JSONValue?
    package var retryable: Bool?
    package var retryAfterMs: Int64?

    package init(code: String, message: String, details: JSONValue? = nil, retryable: Bool? = nil, retryAfterMs: Int64? = nil) {
        self.code = code
        self.message = message
        self.details = details
        self.retryable = retryable
        self.retryAfterMs = retryAfterMs
    }

    init?(json: JSONValue) {
        guard let code = json["code"]?.stringValue, let message = json["message"]?.stringValue else { return nil }
        self.code = code
        self.message = message
        details = json["details"]
        retryable = json["retryable"]?.boolValue
        retryAfterMs = json["retryAfterMs"]?.intValue.map { max(0, $0) }
    }

    /// `details.code`, where connect failures put their structured reason.
    package var detailCode: String? { details?["code"]?.stringValue }

    /// Neutralised: the Gateway chose both strings (`GatewayText`).
    package var description: String { "\(GatewayText.neutralized(code, limit: 64)): \(GatewayText.neutralized(message))" }
}

/// Why a frame from the Gateway could not be used.
package enum FrameError: Error, Equatable, CustomStringConvertible {
    case empty
    case invalidUTF8
    case invalidJSON
    case notAnObject
    case missingField(String)
    case wrongType(field: String, expected: String)
    case unknownType(String)

    package var description: String {
        let what: String
        switch self {
        case .empty: what = "an empty message"
        case .invalidUTF8: what = "bytes that are not UTF-8 text"
        case .invalidJSON: what = "text that is not JSON"
        case .notAnObject: what = "JSON that is not an object"
        case .missingField(let f): what = "a frame without the required field '\(f)'"
        case .wrongType(let f, let t): what = "a frame whose '\(f)' is not a \(t)"
        case .unknownType(let t): what = "a frame of unknown type '\(t)'"
        }
        return "The Gateway sent \(what); the frame was ignored."
    }
}
