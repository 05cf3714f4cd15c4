/// A `node.invoke.request` event: `{id, nodeId, command, paramsJSON?, timeoutMs?, idempotencyKey?}`. The
/// payload may come as an object or as a JSON string, and the params as `paramsJSON` (a string) or `params`.
package struct NodeInvokeRequest: Sendable, Equatable {
    package var id: String
    package var nodeId: String?
    package var command: String
    package var params: JSONValue?

    /// Longer ids or command names than this can only be hostile; such a request is not answered.
    static let maxIdLength = 256

    /// Why a request could not be read: without `id` it cannot be answered at all.
    package enum ParseError: Error, Equatable, CustomStringConvertible {
        case unanswerable(String)
        case invalid(id: String, nodeId: String?, reason: String)

        package var description: String {
            switch self {
            case .unanswerable(let why): "a node.invoke.request that cannot be answered: \(why)"
            case .invalid(_, _, let why): "an invalid node.invoke.request: \(why)"
            }
        }
    }

    package init(payload: JSONValue?) throws(ParseError) {
        var body = payload
        if let text = payload?.stringValue {
            guard let parsed = JSONValue.parse(Array(text.utf8)) else { throw .unanswerable("the payload string is not JSON") }
            body = parsed
        }
        guard let body, case .object = body else { throw .unanswerable("the payload is not an object") }
        guard let id = body["id"]?.stringValue, !id.isEmpty, id.utf8.count <= Self.maxIdLength else {
            throw .unanswerable("id is missing, not a string or too long")
        }
        let nodeId = body["nodeId"]?.stringValue.flatMap { $0.isEmpty || $0.utf8.count > Self.maxIdLength ? nil : $0 }
        guard let command = body["command"]?.stringValue, !command.isEmpty, command.utf8.count <= Self.maxIdLength else {
            throw .invalid(id: id, nodeId: nodeId, reason: "command is missing, not a string or too long")
        }
        if let paramsJSON = body["paramsJSON"], paramsJSON != .null {
            guard let text = paramsJSON.stringValue, let parsed = JSONValue.parse(Array(text.utf8)) else {
                throw .invalid(id: id, nodeId: nodeId, reason: "paramsJSON is not a JSON string")
            }
            params = parsed
        } else {
            params = body["params"].flatMap { $0 == .null ? nil : $0 }
        }
        self.id = id
        self.nodeId = nodeId
        self.command = command
    }
}

/// The `node.invoke.result` params: `{id, nodeId, ok, payloadJSON?, error?{code, message}}`.
package enum NodeInvokeResult {
    package static func success(id: String, nodeId: String, payload: JSONValue) -> JSONValue {
        ["id": .string(id), "nodeId": .string(nodeId), "ok": true, "payloadJSON": .string(payload.jsonText)]
    }

    package static func failure(id: String, nodeId: String, code: String, message: String) -> JSONValue {
        let text = message.isEmpty ? code : String(message.prefix(500))
        return ["id": .string(id), "nodeId": .string(nodeId), "ok": false,
                "error": ["code": .string(code), "message": .string(text)]]
    }
}
