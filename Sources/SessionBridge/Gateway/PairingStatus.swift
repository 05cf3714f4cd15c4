/// What a role that cannot chat yet is waiting for, in the words `setup`, `run` and `status` share.
package enum PairingStatus {
    /// A role's pairing request waits for the owner: "operator pairing pending: approve <id>".
    package static func pending(_ role: GatewayRole, requestId: String?) -> String {
        guard let requestId, GatewayText.isRequestId(requestId) else {
            return "\(role.rawValue) pairing pending: on the Gateway host run 'openclaw devices list' and approve this device"
        }
        return "\(role.rawValue) pairing pending: approve \(requestId) (on the Gateway host: openclaw devices approve \(requestId))"
    }

    /// The operator socket has nothing to authenticate with: the device is a node only and cannot chat.
    package static let noOperatorCredential = "no operator credential: the device is paired as a node only and cannot send chat. "
        + "Run 'openclaw-talk setup' again with a setup code that includes operator access (openclaw qr, not a Node host link), or "
        + "with --token-file FILE (the Gateway's shared token) or --password-file FILE"
}

/// Why the Gateway asks the owner to approve a role (`details.reason` of the refused connect; its wire words).
package enum PairingReason: String, Sendable, Equatable, CaseIterable {
    /// The device is not paired for the role yet.
    case notPaired = "not-paired"
    /// The device is paired, for another role: the operator's request after the node's.
    case roleUpgrade = "role-upgrade"
    /// The role asks for scopes beyond the ones approved.
    case scopeUpgrade = "scope-upgrade"
    /// The device's announced metadata changed since its approval.
    case metadataUpgrade = "metadata-upgrade"
}
