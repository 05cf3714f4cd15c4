import Foundation

/// One control request: `{"id", "cmd", "args"}` on one line.
package struct ControlRequest: Sendable, Equatable {
    package var id: ControlJSON
    package var cmd: String
    package var args: [String: ControlJSON]

    package init(id: ControlJSON = .null, cmd: String, args: [String: ControlJSON] = [:]) {
        self.id = id
        self.cmd = cmd
        self.args = args
    }

    package var line: [UInt8] {
        ControlJSON.object(["id": id, "cmd": .string(cmd), "args": .object(args)]).line()
    }

    /// Parses one line; a line that is not such an object gets an error carrying whatever id it had.
    package static func parse(_ bytes: some Collection<UInt8>) -> Result<ControlRequest, ControlFailure> {
        guard let value = try? JSONDecoder().decode(ControlJSON.self, from: Data(bytes)),
              case .object(let object) = value
        else { return .failure(ControlFailure(id: .null, error: .malformed("not a JSON object"))) }
        let id = object["id"] ?? .null
        switch id {
        case .null, .string, .number: break
        default: return .failure(ControlFailure(id: .null, error: .malformed("id must be a string or a number")))
        }
        guard let cmd = object["cmd"]?.stringValue, !cmd.isEmpty else {
            return .failure(ControlFailure(id: id, error: .malformed("cmd must be a non-empty string")))
        }
        var args: [String: ControlJSON] = [:]
        switch object["args"] {
        case nil, .null?: break
        case .object(let a)?: args = a
        default: return .failure(ControlFailure(id: id, error: .malformed("args must be an object")))
        }
        return .success(ControlRequest(id: id, cmd: cmd, args: args))
    }
}

/// What went wrong with a request, as the `error` object's `code` and `message`.
package struct ControlError: Error, Sendable, Equatable {
    package var code: String
    package var message: String

    package init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    package static func malformed(_ why: String) -> ControlError { .init(code: "malformed", message: why) }
    package static func unknownCommand(_ cmd: String) -> ControlError {
        .init(code: "unknown_command", message: "unknown command \"\(cmd.prefix(64))\"")
    }
    package static func badArgs(_ why: String) -> ControlError { .init(code: "bad_args", message: why) }
    package static let lineTooLong = ControlError(code: "line_too_long", message: "request line too long")
    package static let forbidden = ControlError(code: "forbidden", message: "peer belongs to another user")
    package static let busy = ControlError(code: "busy", message: "too many control connections are open; try again")
}

package struct ControlFailure: Error, Sendable {
    package var id: ControlJSON
    package var error: ControlError
}

/// `{"id", "ok", "result"}` or `{"id", "ok": false, "error": {"code", "message"}}`.
package struct ControlResponse: Sendable, Equatable {
    package var id: ControlJSON
    package var outcome: Result<ControlJSON, ControlError>

    package init(id: ControlJSON, outcome: Result<ControlJSON, ControlError>) {
        self.id = id
        self.outcome = outcome
    }

    package var json: ControlJSON {
        switch outcome {
        case .success(let result): .object(["id": id, "ok": .bool(true), "result": result])
        case .failure(let e):
            .object(["id": id, "ok": .bool(false),
                     "error": .object(["code": .string(e.code), "message": .string(e.message)])])
        }
    }

    package static func parse(_ value: ControlJSON) -> ControlResponse? {
        guard case .bool(let ok)? = value["ok"] else { return nil }
        let id = value["id"] ?? .null
        if ok { return ControlResponse(id: id, outcome: .success(value["result"] ?? .null)) }
        let code = value["error"]?["code"]?.stringValue ?? "unknown"
        let message = value["error"]?["message"]?.stringValue ?? ""
        return ControlResponse(id: id, outcome: .failure(ControlError(code: code, message: message)))
    }
}
