import Foundation

/// Which side of the Gateway a socket plays: a `node` offering Talk, or an `operator` that sends chat.
package enum GatewayRole: String, Sendable, Equatable, Codable {
    case node
    case `operator`
}

/// Everything a socket announces about itself in `connect`, except auth and the device proof.
package struct ClientProfile: Sendable, Equatable {
    package var role: GatewayRole
    /// `client.id`, from the schema's closed enum.
    package var clientId: String
    /// `client.mode`, from the schema's closed enum.
    package var clientMode: String
    package var minProtocol: Int
    package var maxProtocol: Int
    package var version: String
    package var platform = "linux"
    package var deviceFamily = "Linux"
    package var displayName: String
    package var scopes: [String] = []
    package var caps: [String] = []
    package var commands: [String] = []
    package var permissions: [String: Bool] = [:]
    package var locale: String
    package var userAgent: String

    /// The node's push-to-talk commands (upstream allows them to a node with the `talk` cap, node-command-policy.ts).
    package static let pushToTalkCommands = ["talk.ptt.start", "talk.ptt.stop", "talk.ptt.cancel", "talk.ptt.once"]

    /// The node socket: N-1 protocol allowed because role and mode are both `node`. `pushToTalk` false (realtime
    /// mode, whose relay finds the turns itself): the node does not declare `talk.ptt.*`, so a Gateway offers no
    /// push-to-talk for it rather than forwarding commands the node could only refuse.
    package static func node(displayName: String, version: String, locale: String = ClientProfile.currentLocale,
                             pushToTalk: Bool = true) -> ClientProfile {
        ClientProfile(
            role: .node, clientId: "node-host", clientMode: "node", minProtocol: 3, maxProtocol: 4,
            version: version, displayName: displayName, scopes: [],
            caps: ["talk", "voiceWake"],
            // system.notify is in the Gateway's default Linux allowlist (node-command-policy.ts; upstream-gateway.md §2).
            commands: (pushToTalk ? pushToTalkCommands : []) + ["system.notify"],
            permissions: ["microphone": true, "speechRecognition": true],
            locale: locale, userAgent: "openclaw-talk/\(version) (linux)")
    }

    /// The operator socket: its range must include protocol 4; scopes are what its token carries. Its caps make it an
    /// approval client: upstream delivers approval events only to a client id it knows or one advertising these
    /// (`canDeliverApprovals`; fact sheet approvals §1.2 gate b), and `cli` is not among the ids.
    package static let approvalCaps = ["exec-approvals", "plugin-approvals"]

    package static func `operator`(scopes: [String], displayName: String, version: String,
                                   locale: String = ClientProfile.currentLocale) -> ClientProfile {
        ClientProfile(
            role: .operator, clientId: "cli", clientMode: "cli", minProtocol: 3, maxProtocol: 4,
            version: version, displayName: displayName, scopes: scopes, caps: approvalCaps, commands: [], permissions: [:],
            locale: locale, userAgent: "openclaw-talk/\(version) (linux)")
    }

    /// A BCP 47 tag from `LANG` (`en_US.UTF-8` -> `en-US`), `en-US` when unset or `C`.
    package static var currentLocale: String {
        let lang = ProcessInfo.processInfo.environment["LANG"] ?? ""
        let base = lang.split(separator: ".").first.map(String.init) ?? ""
        guard base.count >= 2, base != "C", base != "POSIX" else { return "en-US" }
        return base.replacingOccurrences(of: "_", with: "-")
    }

    /// The default `displayName`: the host name and the start of the device id, so two devices on one host (two
    /// users, or a second state folder) are told apart. Upstream's silent local approvals prune older silent pairings
    /// of the same client id, mode and display name (device-pairing-prune.ts): a shared name would unpair the other.
    package static func defaultDisplayName(deviceId: String) -> String {
        "\(hostName) (openclaw-talk \(deviceId.prefix(6)))"
    }

    /// The host name.
    package static var hostName: String {
        var buf = [CChar](repeating: 0, count: 256)
        guard gethostname(&buf, buf.count) == 0 else { return "Linux" }
        let name = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "Linux" : name
    }
}

/// The `auth` object of `connect`. Passwords are sent but never signed.
package struct ConnectAuth: Sendable, Equatable {
    package var token: String?
    package var bootstrapToken: String?
    package var deviceToken: String?
    package var password: String?

    package init(token: String? = nil, bootstrapToken: String? = nil, deviceToken: String? = nil, password: String? = nil) {
        self.token = token
        self.bootstrapToken = bootstrapToken
        self.deviceToken = deviceToken
        self.password = password
    }

    /// What the Gateway signs against: token, else device token, else bootstrap token, else "".
    package var signatureToken: String { token ?? deviceToken ?? bootstrapToken ?? "" }

    var json: JSONValue? {
        var o: [String: JSONValue] = [:]
        if let token { o["token"] = .string(token) }
        if let bootstrapToken { o["bootstrapToken"] = .string(bootstrapToken) }
        if let deviceToken { o["deviceToken"] = .string(deviceToken) }
        if let password { o["password"] = .string(password) }
        return o.isEmpty ? nil : .object(o)
    }
}

/// The `connect.challenge` event's payload.
package struct ConnectChallenge: Sendable, Equatable {
    package var nonce: String
    package var ts: Int64

    /// Nil unless the payload has a non-empty `nonce` and a non-negative integer `ts`.
    package init?(payload: JSONValue?) {
        guard let nonce = payload?["nonce"]?.stringValue, !nonce.isEmpty, nonce.count <= 512,
              let ts = payload?["ts"], case .int(let t) = ts, t >= 0
        else { return nil }
        self.nonce = nonce
        self.ts = t
    }

    package init(nonce: String, ts: Int64) {
        self.nonce = nonce
        self.ts = ts
    }
}

/// Builds `ConnectParams` as the schema describes it, signing the challenge with the device identity.
package enum ConnectParams {
    package static func build(
        profile: ClientProfile, auth: ConnectAuth, identity: DeviceIdentity, challenge: ConnectChallenge,
        payloadVersion: DeviceAuthPayload.Version
    ) throws(CryptoError) -> JSONValue {
        let payload = DeviceAuthPayload(
            version: payloadVersion, deviceId: identity.deviceId, clientId: profile.clientId,
            clientMode: profile.clientMode, role: profile.role.rawValue, scopes: profile.scopes,
            signedAtMs: challenge.ts, token: auth.signatureToken, nonce: challenge.nonce,
            platform: profile.platform, deviceFamily: profile.deviceFamily)
        let signature = try identity.sign(payload.text)
        var client: [String: JSONValue] = [
            "id": .string(profile.clientId), "version": .string(profile.version),
            "platform": .string(profile.platform), "mode": .string(profile.clientMode),
            "instanceId": .string(identity.instanceId),
        ]
        if !profile.deviceFamily.isEmpty { client["deviceFamily"] = .string(profile.deviceFamily) }
        if !profile.displayName.isEmpty { client["displayName"] = .string(profile.displayName) }
        var params: [String: JSONValue] = [
            "minProtocol": .int(Int64(profile.minProtocol)), "maxProtocol": .int(Int64(profile.maxProtocol)),
            "client": .object(client), "role": .string(profile.role.rawValue),
            "scopes": .array(profile.scopes.map(JSONValue.string)),
            "caps": .array(profile.caps.map(JSONValue.string)),
            "commands": .array(profile.commands.map(JSONValue.string)),
            "permissions": .object(profile.permissions.mapValues(JSONValue.bool)),
            "locale": .string(profile.locale), "userAgent": .string(profile.userAgent),
            "device": [
                "id": .string(identity.deviceId), "publicKey": .string(identity.publicKeyBase64URL),
                "signature": .string(signature), "signedAt": .int(challenge.ts), "nonce": .string(challenge.nonce),
            ],
        ]
        if let a = auth.json { params["auth"] = a }
        return .object(params)
    }
}
