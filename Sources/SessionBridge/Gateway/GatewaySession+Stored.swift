import TalkLogging

extension GatewaySession {
    /// The session `openclaw-talk setup` left behind: the stored Gateway URL, certificate pin, identity and
    /// device tokens. Fails with a message telling the user to run setup when nothing is stored.
    package static func fromStoredSetup(
        paths: StoragePaths, version: String, timing: GatewayConnection.Timing = GatewayConnection.Timing(),
        caFile: String? = nil, pushToTalk: Bool = true, logger: Logger
    ) throws -> GatewaySession {
        guard let config = try GatewayConfig.load(paths: paths) else { throw StoredSetupError.notConfigured }
        let endpoint = try GatewayEndpoint(parsing: config.url)
        let identity = try DeviceIdentity.loadOrCreate(paths: paths)
        let credentials = try CredentialStore(paths: paths, gatewayURL: config.url)
        return GatewaySession(
            identity: identity, credentials: credentials, displayName: config.displayName ?? ClientProfile.defaultDisplayName(deviceId: identity.deviceId),
            version: version,
            openTransport: WebSocketTransport.opener(endpoint: endpoint, pin: config.tlsFingerprint, caFile: caFile, logger: logger),
            trustedEndpoint: DeviceTokenRetry.isTrusted(endpoint, pinnedFingerprint: config.tlsFingerprint),
            pushToTalk: pushToTalk, timing: timing, logger: logger)
    }
}

/// Nothing to connect with yet.
package enum StoredSetupError: Error, Equatable, CustomStringConvertible {
    case notConfigured
    /// gateway.json and the stored credentials name different Gateways.
    case credentialsForAnotherGateway(configured: String, credentials: String)

    package var description: String {
        switch self {
        case .notConfigured:
            "No Gateway is configured yet; run 'openclaw-talk setup CODE' (or setup --gateway URL --token-file FILE) first."
        case .credentialsForAnotherGateway(let configured, let credentials):
            "The stored credentials belong to \(credentials), not to the configured Gateway \(configured); "
                + "they are not sent to it. Run 'openclaw-talk setup' again."
        }
    }
}
