/// The Gateway's `hello-ok`: what it speaks, who we are to it, and the limits to keep.
package struct HelloOk: Sendable, Equatable {
    /// A device token the Gateway handed us, with the role and scopes it carries.
    package struct IssuedToken: Sendable, Equatable, Codable {
        package var deviceToken: String
        package var role: String
        package var scopes: [String]
        package var issuedAtMs: Int64?
    }

    package var protocolVersion: Int
    package var serverVersion: String
    package var connId: String
    package var methods: [String]
    package var events: [String]
    /// `snapshot.sessionDefaults.mainSessionKey`, or "main" when absent.
    package var mainSessionKey: String
    /// `snapshot.sessionDefaults.mainSessionKey` as sent (nil when absent), so `talk.config` can stand in.
    package var advertisedMainSessionKey: String?
    /// This socket's live role and scopes (`auth.role`, `auth.scopes`).
    package var role: String
    package var scopes: [String]
    /// `auth.deviceToken` (with this socket's role) followed by `auth.deviceTokens[]`.
    package var issuedTokens: [IssuedToken]
    package var maxPayload: Int
    /// `policy.attachments`: decoded bytes allowed per attachment and per image (newer Gateways; nil when absent).
    package var attachmentLimits: AttachmentLimits?
    package var maxBufferedBytes: Int
    package var tickIntervalMs: Int

    /// Sizes we accept from `policy`: a hostile value must not make us buffer gigabytes or spin.
    /// The top is 25 MiB (the Gateway's own default) whatever the Gateway offers: a message that size
    /// already costs a few hundred MB to parse, and Talk needs far less.
    static let maxPayloadRange = 1024...(25 << 20)
    static let tickRange = 50...600_000

    /// Parses the `payload` of the connect response.
    package init(payload: JSONValue?) throws(FrameError) {
        guard let p = payload, case .object = p else { throw .missingField("payload") }
        guard p["type"]?.stringValue == "hello-ok" else { throw .wrongType(field: "payload.type", expected: "\"hello-ok\"") }
        guard let proto = p["protocol"]?.intValue, (1...1000).contains(proto) else {
            throw .wrongType(field: "protocol", expected: "protocol number")
        }
        protocolVersion = Int(proto)
        guard let version = p["server"]?["version"]?.stringValue, !version.isEmpty else { throw .missingField("server.version") }
        serverVersion = String(version.prefix(100))
        connId = p["server"]?["connId"]?.stringValue ?? ""
        methods = p["features"]?["methods"]?.stringArray ?? []
        events = p["features"]?["events"]?.stringArray ?? []
        let key = p["snapshot"]?["sessionDefaults"]?["mainSessionKey"]?.stringValue ?? ""
        mainSessionKey = key.isEmpty ? "main" : key
        advertisedMainSessionKey = key.isEmpty ? nil : String(key.prefix(512))
        guard let auth = p["auth"], case .object = auth else { throw .missingField("auth") }
        role = auth["role"]?.stringValue ?? ""
        scopes = auth["scopes"]?.stringArray ?? []
        var tokens: [IssuedToken] = []
        if let t = auth["deviceToken"]?.stringValue, !t.isEmpty {
            tokens.append(IssuedToken(deviceToken: t, role: role, scopes: scopes, issuedAtMs: auth["issuedAtMs"]?.intValue))
        }
        for entry in auth["deviceTokens"]?.arrayValue ?? [] {
            guard let t = entry["deviceToken"]?.stringValue, !t.isEmpty, let r = entry["role"]?.stringValue else { continue }
            tokens.append(IssuedToken(deviceToken: t, role: r, scopes: entry["scopes"]?.stringArray ?? [],
                                      issuedAtMs: entry["issuedAtMs"]?.intValue))
        }
        issuedTokens = tokens
        guard let policy = p["policy"], let maxPayload = policy["maxPayload"]?.intValue,
              let tick = policy["tickIntervalMs"]?.intValue
        else { throw .missingField("policy") }
        self.maxPayload = Int(clamping: min(max(maxPayload, Int64(Self.maxPayloadRange.lowerBound)), Int64(Self.maxPayloadRange.upperBound)))
        maxBufferedBytes = Int(clamping: policy["maxBufferedBytes"]?.intValue ?? 0)
        attachmentLimits = AttachmentLimits(policy["attachments"])
        tickIntervalMs = Int(clamping: min(max(tick, Int64(Self.tickRange.lowerBound)), Int64(Self.tickRange.upperBound)))
    }
}

/// `hello-ok.policy.attachments` (docs gateway/protocol.md; `src/gateway/chat-attachment-policy.ts`): the decoded size
/// each attachment may have, and each image.
package struct AttachmentLimits: Sendable, Equatable {
    package var maxBytes: Int
    package var maxImageBytes: Int

    package init(maxBytes: Int, maxImageBytes: Int) {
        self.maxBytes = maxBytes
        self.maxImageBytes = maxImageBytes
    }

    /// Nil unless `maxBytes` is a positive integer; `maxImageBytes` defaults as upstream's does (min(maxBytes, 6 MB)).
    init?(_ value: JSONValue?) {
        guard let max = value?["maxBytes"]?.intValue, max > 0 else { return nil }
        maxBytes = Int(clamping: max)
        let image = value?["maxImageBytes"]?.intValue.flatMap { $0 > 0 ? Int(clamping: $0) : nil }
        maxImageBytes = min(image ?? 6_000_000, maxBytes)
    }

    /// What an older Gateway that states no limits accepted: a fixed 5 000 000-byte parse limit (April `chat.ts`).
    package static let legacy = AttachmentLimits(maxBytes: 5_000_000, maxImageBytes: 5_000_000)
}
