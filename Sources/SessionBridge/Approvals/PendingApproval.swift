import Foundation

/// Which family an approval belongs to: the agent running a command (`exec.approval.*`) or a plugin's tool call
/// (`plugin.approval.*`; its ids start with `plugin:`).
package enum ApprovalKind: String, Sendable, Equatable, CaseIterable {
    case exec
    case plugin

    /// The family of an event or method name (`exec.approval.requested` → exec), nil for another name.
    package init?(eventName: String) {
        guard let head = eventName.split(separator: ".").first, let kind = ApprovalKind(rawValue: String(head)) else { return nil }
        self = kind
    }

    /// Upstream reserves the `plugin:` prefix for plugin approval ids (RESERVED_PLUGIN_APPROVAL_ID_PREFIX).
    package static func guess(fromId id: String) -> ApprovalKind { id.hasPrefix("plugin:") ? .plugin : .exec }
}

/// The three decisions the Gateway takes (`isApprovalDecision`); anything else is `INVALID_REQUEST`.
package enum ApprovalDecision: String, Sendable, Equatable, CaseIterable {
    case allowOnce = "allow-once"
    case allowAlways = "allow-always"
    case deny
}

/// One approval waiting for a decision, as `*.approval.requested` and `*.approval.list` give it
/// (`{approvalKind?, id, request, createdAtMs, expiresAtMs}`). Decoded leniently, as older Gateways send a subset of
/// the request's fields, and bounded, as every field is the peer's choice.
package struct PendingApproval: Sendable, Equatable {
    package var id: String
    package var kind: ApprovalKind
    package var createdAtMs: Int64
    package var expiresAtMs: Int64
    /// What the request allows; `deny` is always among them (the schema requires it).
    package var allowedDecisions: [ApprovalDecision]

    // An exec approval: the command as the Gateway shows it (sanitised display text), where and for whom.
    package var command: String?
    package var commandArgv: [String]?
    package var cwd: String?
    package var host: String?
    package var nodeId: String?
    package var agentId: String?
    package var sessionKey: String?
    package var warningText: String?

    // A plugin approval.
    package var title: String?
    package var description: String?
    package var severity: String?
    package var pluginId: String?
    package var toolName: String?

    /// Bounds on what is kept of a peer's request.
    package enum Limits {
        /// An id longer than this is refused (upstream ids are UUIDs, or `plugin:` and one).
        static let idBytes = 256
        /// The command's display text; the full text is what the status and events show, so it is kept long.
        static let commandCharacters = 8192
        static let argvCount = 256
        static let fieldCharacters = 1024
        /// Upstream's default timeout: a request without `expiresAtMs` lives this long (DEFAULT_EXEC_APPROVAL_TIMEOUT_MS).
        static let defaultLifetimeMs: Int64 = 1_800_000
    }

    package init(id: String, kind: ApprovalKind, createdAtMs: Int64, expiresAtMs: Int64,
                 allowedDecisions: [ApprovalDecision] = ApprovalDecision.allCases, command: String? = nil) {
        self.id = id
        self.kind = kind
        self.createdAtMs = createdAtMs
        self.expiresAtMs = expiresAtMs
        self.allowedDecisions = allowedDecisions
        self.command = command
    }

    /// Why a payload is not an approval.
    package enum ParseError: Error, Equatable, CustomStringConvertible {
        case notAnObject
        case badId
        package var description: String {
            switch self {
            case .notAnObject: "the approval is not a JSON object"
            case .badId: "the approval's id is missing, empty or too long"
            }
        }
    }

    /// Parses a requested event's payload or a list entry. `kind` is the family the event or method named; the
    /// payload's `approvalKind` and a `plugin:` id win over it. `nowMs` stands in for a missing `createdAtMs`.
    package init(payload: JSONValue?, kind: ApprovalKind, nowMs: Int64) throws(ParseError) {
        guard let payload, case .object = payload else { throw .notAnObject }
        guard let id = payload["id"]?.stringValue, !id.isEmpty, id.utf8.count <= Limits.idBytes else { throw .badId }
        self.id = id
        if let named = payload["approvalKind"]?.stringValue.flatMap(ApprovalKind.init(rawValue:)) {
            self.kind = named
        } else {
            self.kind = id.hasPrefix("plugin:") ? .plugin : kind
        }
        createdAtMs = payload["createdAtMs"]?.intValue ?? nowMs
        let expires = payload["expiresAtMs"]?.intValue
        expiresAtMs = expires ?? (createdAtMs &+ Limits.defaultLifetimeMs)
        let request = payload["request"]
        allowedDecisions = Self.decisions(request?["allowedDecisions"])
        command = Self.text(request?["command"], Limits.commandCharacters)
            ?? Self.text(request?["commandPreview"], Limits.commandCharacters)
            ?? Self.text(request?["systemRunPlan"]?["commandText"], Limits.commandCharacters)
        if let argv = request?["commandArgv"]?.arrayValue {
            commandArgv = argv.prefix(Limits.argvCount).compactMap { Self.text($0, Limits.fieldCharacters) }
        }
        cwd = Self.text(request?["cwd"], Limits.fieldCharacters)
        host = Self.text(request?["host"], Limits.fieldCharacters)
        nodeId = Self.text(request?["nodeId"], Limits.fieldCharacters)
        agentId = Self.text(request?["agentId"], Limits.fieldCharacters)
        sessionKey = Self.text(request?["sessionKey"], Limits.fieldCharacters)
        warningText = Self.text(request?["warningText"], Limits.fieldCharacters)
        title = Self.text(request?["title"], 80)
        description = Self.text(request?["description"], 512)
        severity = Self.text(request?["severity"], 32)
        pluginId = Self.text(request?["pluginId"], Limits.fieldCharacters)
        toolName = Self.text(request?["toolName"], Limits.fieldCharacters)
        if command == nil, commandArgv?.isEmpty == false { command = commandArgv?.joined(separator: " ") }
    }

    /// The decisions a request allows: upstream's rule when it does not list them (`allow-once`, `allow-always`,
    /// `deny`), `deny` added when a hostile or old list lacks it, unknown strings ignored.
    static func decisions(_ value: JSONValue?) -> [ApprovalDecision] {
        guard let list = value?.arrayValue else { return ApprovalDecision.allCases }
        var found = ApprovalDecision.allCases.filter { decision in list.contains { $0.stringValue == decision.rawValue } }
        if !found.contains(.deny) { found.append(.deny) }
        return found
    }

    private static func text(_ value: JSONValue?, _ limit: Int) -> String? {
        guard let s = value?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines), !s.isEmpty else { return nil }
        return String(s.prefix(limit))
    }

    /// One line for lists and notifications: the command (exec) or the title (plugin).
    package var headline: String {
        switch kind {
        case .exec: command ?? "a command"
        case .plugin: title ?? toolName.map { "the tool \($0)" } ?? "a plugin action"
        }
    }

    /// Whether it is still open at `nowMs` (the Gateway drops it at `expiresAtMs`, without telling us).
    package func isLive(atMs nowMs: Int64) -> Bool { nowMs < expiresAtMs }

    /// The fields the status, `approvals --json` and events show.
    package var json: JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(id), "kind": .string(kind.rawValue), "createdAtMs": .int(createdAtMs),
            "expiresAtMs": .int(expiresAtMs), "allowedDecisions": .array(allowedDecisions.map { .string($0.rawValue) }),
            "summary": .string(headline),
        ]
        let optional: [(String, String?)] = [
            ("command", command), ("cwd", cwd), ("host", host), ("nodeId", nodeId), ("agentId", agentId),
            ("sessionKey", sessionKey), ("warningText", warningText), ("title", title), ("description", description),
            ("severity", severity), ("pluginId", pluginId), ("toolName", toolName),
        ]
        for (key, value) in optional { if let value { o[key] = .string(value) } }
        if let commandArgv { o["commandArgv"] = .array(commandArgv.map(JSONValue.string)) }
        return .object(o)
    }
}
