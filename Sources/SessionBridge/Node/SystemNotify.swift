/// The `system.notify` node command (upstream-gateway.md §6): `{title?, body?, sound?, priority?, delivery?}` in,
/// `{ok: true}` out. Title and body are each optional but not both empty. The checks and error codes follow
/// upstream's Linux node (`extensions/linux-node/src/commands.ts`): first whether notifications are turned off
/// (`NOTIFICATIONS_DISABLED`), then whether anything can show or speak them (`NOTIFICATIONS_UNAVAILABLE`), then the
/// params (`INVALID_REQUEST: empty notification`); each message starts with its code, as upstream's do.
package struct SystemNotifyRequest: Sendable, Equatable {
    package enum Priority: String, Sendable, Equatable, CaseIterable {
        case passive, active, timeSensitive
    }

    package var title: String
    package var body: String
    package var priority: Priority
    /// `sound` as sent; `none`, `silent`, `off`, `false` or `0` mean silent (as iOS reads it).
    package var sound: String?
    /// `system`, `overlay` or `auto`; a desktop has one place to show it, so this only reaches the log.
    package var delivery: String?

    static let titleCharacters = 256
    static let bodyCharacters = 4096

    package init(title: String, body: String, priority: Priority = .active, sound: String? = nil, delivery: String? = nil) {
        self.title = String(title.prefix(Self.titleCharacters))
        self.body = String(body.prefix(Self.bodyCharacters))
        self.priority = priority
        self.sound = sound
        self.delivery = delivery
    }

    /// Reads the params; a non-string title or body counts as empty (upstream reads only strings), an unknown
    /// priority as `active` (upstream's `else normal`).
    package init(params: JSONValue?) throws(NodeCommandFailure) {
        let title = params?["title"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let body = params?["body"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard !title.isEmpty || !body.isEmpty else { throw .emptyNotification }
        self.init(title: title, body: body,
                  priority: params?["priority"]?.stringValue.flatMap(Priority.init(rawValue:)) ?? .active,
                  sound: params?["sound"]?.stringValue.map { String($0.prefix(64)) },
                  delivery: params?["delivery"]?.stringValue.map { String($0.prefix(16)) })
    }

    package var isSilent: Bool {
        guard let sound else { return false }
        return ["none", "silent", "off", "false", "0"].contains(sound.lowercased())
    }

    /// What the command's `params` are when this side sends one (`notify`, tests).
    package var params: JSONValue {
        var o: [String: JSONValue] = ["title": .string(title), "body": .string(body), "priority": .string(priority.rawValue)]
        if let sound { o["sound"] = .string(sound) }
        if let delivery { o["delivery"] = .string(delivery) }
        return .object(o)
    }

    /// The success result upstream's Linux node returns.
    package static let okPayload: JSONValue = ["ok": true]
}

/// A node command that failed, as `node.invoke.result`'s `error {code, message}`.
package struct NodeCommandFailure: Error, Sendable, Equatable, CustomStringConvertible {
    package var code: String
    package var message: String

    package init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    package static let emptyNotification = NodeCommandFailure(code: "INVALID_REQUEST", message: "INVALID_REQUEST: empty notification")
    package static let notificationsDisabled = NodeCommandFailure(
        code: "NOTIFICATIONS_DISABLED", message: "NOTIFICATIONS_DISABLED: notifications are turned off on this device")
    package static let notificationsUnavailable = NodeCommandFailure(
        code: "NOTIFICATIONS_UNAVAILABLE", message: "NOTIFICATIONS_UNAVAILABLE: no notification server and no voice on this device")

    package var description: String { message }
}

/// Serves one node command other than push-to-talk: its params in, its payload (or a failure) out.
package typealias NodeCommandHandler = @Sendable (JSONValue?) async -> Result<JSONValue, NodeCommandFailure>
