import Foundation

/// The secrets that let this device reconnect: device tokens per role, a shared token or password when
/// configured directly, and, while pairing is under way, the setup code's bootstrap token (kept until each role's
/// device token is stored or the Gateway refuses it for that role, as Windows Hub keeps it) and a shared secret
/// given once for the operator role (dropped when the operator's device token arrives). Kept in the state folder
/// (0600 file in a 0700 folder). One actor owns them.
package actor CredentialStore {
    /// A shared token or password given once to pair the operator role (a node-only or expired setup code).
    package struct OperatorSecret: Sendable, Equatable, Codable {
        package var token: String?
        package var password: String?
        package init(token: String?, password: String?) {
            self.token = token
            self.password = password
        }
    }

    /// What is on disk.
    package struct Contents: Sendable, Equatable, Codable {
        package var gatewayURL: String?
        package var sharedToken: String?
        package var password: String?
        /// Device tokens by role (`node`, `operator`).
        package var deviceTokens: [String: HelloOk.IssuedToken] = [:]
        /// The setup code's bootstrap token, until every role has its device token or refused it.
        package var bootstrapToken: String?
        /// Roles for which the Gateway refused the bootstrap token (`AUTH_BOOTSTRAP_TOKEN_INVALID`).
        package var bootstrapRefused: [String]?
        /// Until the operator's device token arrives.
        package var operatorSecret: OperatorSecret?
        package init() {}
    }

    private let paths: StoragePaths?
    /// Where a staged store (`staged`) writes once `commit()` is called; it writes nothing before.
    private let commitPaths: StoragePaths?
    private var contents: Contents
    /// False when tokens came over an endpoint where storing them is unsafe (plaintext to a non-local host).
    private let persist: Bool

    /// Loads the stored secrets for `paths` (nil paths keep everything in memory, for benchmarks).
    package init(paths: StoragePaths?, persist: Bool = true) throws {
        self.paths = paths
        self.commitPaths = nil
        self.persist = persist
        contents = try paths.map(Self.load) ?? Contents()
    }

    /// The stored secrets, which must belong to `gatewayURL` (what gateway.json names): a token for one
    /// Gateway is never sent to another.
    package init(paths: StoragePaths, gatewayURL: String) throws {
        let loaded = try Self.load(paths)
        if let stored = loaded.gatewayURL, stored != gatewayURL {
            throw StoredSetupError.credentialsForAnotherGateway(configured: gatewayURL, credentials: stored)
        }
        self.paths = paths
        commitPaths = nil
        persist = true
        contents = loaded
    }

    /// A setup in progress: what is stored, replaced in memory by the new Gateway's URL and secrets.
    /// Device tokens stay only for the same Gateway without a fresh setup code. Nothing is written until
    /// `commit()`, so a setup that fails or is interrupted leaves the stored credentials as they were.
    package static func staged(
        paths: StoragePaths, gatewayURL: String, bootstrapToken: String?, sharedToken: String?, password: String?,
        operatorSecret: OperatorSecret? = nil, persist: Bool
    ) throws -> CredentialStore {
        var contents = try load(paths)
        if contents.gatewayURL != gatewayURL || bootstrapToken != nil { contents.deviceTokens = [:] }
        contents.gatewayURL = gatewayURL
        contents.sharedToken = sharedToken
        contents.password = password
        contents.bootstrapToken = bootstrapToken
        contents.bootstrapRefused = nil
        contents.operatorSecret = operatorSecret
        return CredentialStore(staged: contents, commitPaths: paths, persist: persist)
    }

    private init(staged: Contents, commitPaths: StoragePaths, persist: Bool) {
        paths = nil
        self.commitPaths = commitPaths
        self.persist = persist
        contents = staged
    }

    /// Writes a staged store where it belongs (setup calls it after `hello-ok`).
    package func commit() throws {
        guard persist, let commitPaths else { return }
        try Self.write(contents, to: commitPaths)
    }

    private static func load(_ paths: StoragePaths) throws -> Contents {
        guard let bytes = try SecureStore.readPrivateFile(paths.tokensFile) else { return Contents() }
        do { return try JSONDecoder().decode(Contents.self, from: Data(bytes)) } catch {
            throw StorageError.damaged(path: paths.tokensFile, reason: "not a token file")
        }
    }

    package var snapshot: Contents { contents }

    /// Replaces the stored secrets at once (tests; setup stages instead, see `staged`): old device tokens
    /// are dropped for a new Gateway or a fresh setup code, since a new code forces the bootstrap path.
    package func beginSetup(gatewayURL: String, bootstrapToken: String?, sharedToken: String?, password: String?) throws {
        if contents.gatewayURL != gatewayURL || bootstrapToken != nil { contents.deviceTokens = [:] }
        contents.gatewayURL = gatewayURL
        contents.sharedToken = sharedToken
        contents.password = password
        contents.bootstrapToken = bootstrapToken
        contents.bootstrapRefused = nil
        try save()
    }

    /// The `auth` for a role: password when set; `token` = shared token, else the role's device token, else (operator)
    /// the secret given once to pair it; the bootstrap token only when nothing else resolved and the Gateway has not
    /// refused it for this role. A setup code's token goes on both sockets: upstream accepts it for every role of its
    /// profile (`verifyDeviceBootstrapToken`).
    package func auth(for role: GatewayRole) -> ConnectAuth {
        var a = ConnectAuth(password: contents.password)
        a.token = contents.sharedToken ?? contents.deviceTokens[role.rawValue]?.deviceToken
        if role == .operator, a.token == nil, let secret = contents.operatorSecret {
            a.token = secret.token
            a.password = a.password ?? secret.password
        }
        if a.token == nil, a.password == nil, let bootstrap = contents.bootstrapToken,
           !(contents.bootstrapRefused ?? []).contains(role.rawValue) {
            a.bootstrapToken = bootstrap
        }
        return a
    }

    /// The Gateway refused the bootstrap token for `role` (a node-only code on the operator socket, or the code
    /// expired or was spent): that role needs another credential. Once no role can use it, it is forgotten.
    package func bootstrapRefused(for role: GatewayRole) throws {
        guard contents.bootstrapToken != nil else { return }
        var refused = Set(contents.bootstrapRefused ?? [])
        refused.insert(role.rawValue)
        contents.bootstrapRefused = refused.sorted()
        dropSpentBootstrap()
        try save()
    }

    /// Gives the operator role a shared token or password once (setup, for a node-only or expired code).
    package func useOperatorSecret(_ secret: OperatorSecret) throws {
        contents.operatorSecret = secret
        try save()
    }

    /// What the one retry after a refused shared token needs for a role; nil when no shared token is configured.
    package func deviceTokenRetry(for role: GatewayRole, trustedEndpoint: Bool) -> DeviceTokenRetry? {
        guard let shared = contents.sharedToken else { return nil }
        return DeviceTokenRetry(trustedEndpoint: trustedEndpoint, sharedToken: shared,
                                deviceToken: contents.deviceTokens[role.rawValue]?.deviceToken)
    }

    /// Operator scopes: what the stored operator token carries, else read + write; `operator.approvals` always, so this
    /// device reviews the agent's commands (issue 26). A stored token without it makes the Gateway answer with a
    /// `scope-upgrade` pairing request, shown and waited for as any pairing request (silent on loopback upstream).
    package func operatorScopes() -> [String] {
        let stored = contents.deviceTokens[GatewayRole.operator.rawValue]?.scopes ?? ["operator.read", "operator.write"]
        return stored.contains(Self.approvalsScope) ? stored : (stored + [Self.approvalsScope]).sorted()
    }

    static let approvalsScope = "operator.approvals"

    /// Whether the operator socket has anything to authenticate with.
    package var hasOperatorCredential: Bool {
        contents.sharedToken != nil || contents.password != nil || contents.deviceTokens["operator"] != nil
            || contents.operatorSecret != nil
            || (contents.bootstrapToken != nil && !(contents.bootstrapRefused ?? []).contains(GatewayRole.operator.rawValue))
    }

    /// Keeps the device tokens a `hello-ok` handed out. A token equal to the stored one keeps its stored scopes.
    package func record(_ hello: HelloOk) throws {
        for issued in hello.issuedTokens {
            guard let role = GatewayRole(rawValue: issued.role) else { continue }
            var token = issued
            if let old = contents.deviceTokens[role.rawValue], old.deviceToken == issued.deviceToken { token.scopes = old.scopes }
            // Node tokens carry no operator scopes; handed-off operator scopes are filtered to the known set.
            token.scopes = role == .node ? [] : token.scopes.filter(Self.handOffScopes.contains)
            contents.deviceTokens[role.rawValue] = token
        }
        // Only the operator's device token is kept of a secret given once to pair it.
        if contents.deviceTokens[GatewayRole.operator.rawValue] != nil { contents.operatorSecret = nil }
        dropSpentBootstrap()
        try save()
    }

    /// The bootstrap token is forgotten once every role has its device token or has been refused it.
    private func dropSpentBootstrap() {
        let refused = Set(contents.bootstrapRefused ?? [])
        let done = [GatewayRole.node, .operator].allSatisfy { contents.deviceTokens[$0.rawValue] != nil || refused.contains($0.rawValue) }
        if done {
            contents.bootstrapToken = nil
            contents.bootstrapRefused = nil
        }
    }

    static let handOffScopes: Set<String> = [
        "operator.admin", "operator.approvals", "operator.questions", "operator.read", "operator.talk",
        "operator.talk.secrets", "operator.write",
    ]

    private func save() throws {
        guard persist, let paths else { return }
        try Self.write(contents, to: paths)
    }

    private static func write(_ contents: Contents, to paths: StoragePaths) throws {
        try SecureStore.preparePrivateDirectory(paths.stateDirectory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try SecureStore.writeFile(paths.tokensFile, Array(try encoder.encode(contents)), mode: 0o600)
    }
}
