/// Why a `node.presence.alive` beacon is sent (`NodePresenceAliveReason`).
package enum PresenceTrigger: String, Sendable, Equatable, CaseIterable {
    case background
    case silentPush = "silent_push"
    case backgroundAppRefresh = "bg_app_refresh"
    case significantLocation = "significant_location"
    case manual
    case connect
}

/// One row of the Gateway's instance list (`system-presence`, `PresenceEntry`), the fields a user sees.
package struct PresenceEntry: Sendable, Equatable {
    package var host: String?
    package var platform: String?
    package var deviceFamily: String?
    package var mode: String?
    package var instanceId: String?
    package var deviceId: String?
    package var roles: [String]
    package var reason: String?
    package var ts: Int64?

    init(json: JSONValue) {
        host = json["host"]?.stringValue
        platform = json["platform"]?.stringValue
        deviceFamily = json["deviceFamily"]?.stringValue
        mode = json["mode"]?.stringValue
        instanceId = json["instanceId"]?.stringValue
        deviceId = json["deviceId"]?.stringValue
        roles = json["roles"]?.stringArray ?? []
        reason = json["reason"]?.stringValue
        ts = json["ts"]?.intValue
    }
}

/// This device in the Gateway's instance list: the node socket's `connect` puts it there (display name,
/// platform `linux`, the stable `client.instanceId`); `alive` beacons keep its last-seen time fresh.
package struct NodePresence: Sendable {
    package let node: any GatewayCalling
    package let profile: ClientProfile

    package init(node: any GatewayCalling, profile: ClientProfile) {
        self.node = node
        self.profile = profile
    }

    /// Sends a `node.presence.alive` beacon; returns whether the Gateway handled it (older ones just say ok).
    @discardableResult
    package func alive(trigger: PresenceTrigger, sentAtMs: Int64) async throws(GatewayRequestError) -> Bool {
        var payload: [String: JSONValue] = [
            "trigger": .string(trigger.rawValue), "sentAtMs": .int(max(0, sentAtMs)),
            "version": .string(profile.version), "platform": .string(profile.platform),
        ]
        if !profile.displayName.isEmpty { payload["displayName"] = .string(profile.displayName) }
        if !profile.deviceFamily.isEmpty { payload["deviceFamily"] = .string(profile.deviceFamily) }
        let reply = try await node.request(
            method: "node.event",
            params: ["event": "node.presence.alive", "payloadJSON": .string(JSONValue.object(payload).jsonText)],
            timeout: nil)
        return reply?["handled"]?.boolValue ?? (reply?["ok"]?.boolValue == true)
    }

    /// The Gateway's instance list (needs `operator.read`, so ask on the operator socket).
    package static func list(on gateway: any GatewayCalling) async throws(GatewayRequestError) -> [PresenceEntry] {
        let reply = try await gateway.request(method: "system-presence", params: nil, timeout: nil)
        let rows = reply?.arrayValue ?? reply?["presence"]?.arrayValue ?? []
        return rows.filter { $0.objectValue != nil }.map(PresenceEntry.init(json:))
    }
}
