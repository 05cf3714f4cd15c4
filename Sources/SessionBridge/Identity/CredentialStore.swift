import Foundation

/// The secrets that let this device reconnect: device tokens per role, and a shared token or password
/// when configured directly. Kept in the state folder (0600 file in a 0700 folder). One actor owns them.
package actor CredentialStore {
    /// What is on disk.
    package struct Contents: Sendable, Equatable, Codable {
        package var gatewayURL: String?
        package var sharedToken: String?
        package var password: String?
        /// Device tokens by role (`node`, `operator`).
        package var deviceTokens: [String: HelloOk.IssuedToken] = [:]
        package init() {}
    }

    private let paths: StoragePaths?
    /// Where a staged store (`staged`) writes once `commit()` is called; it writes nothing before.
    private let commitPaths: StoragePaths?
    private var contents: Contents
    /// A bootstrap token from a fresh setup code: used (node role) until a node device token arrives.
    private var bootstrapToken: String?
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
        persist: Bool
    ) throws -> CredentialStore {
        var contents = try load(paths)
        if contents.gatewayURL != gatewayURL || bootstrapToken != nil { contents.deviceTokens = [:] }
        contents.gatewayURL = gatewayURL
        contents.sharedToken = sharedToken
        contents.password = password
        return CredentialStore(staged: contents, bootstrapToken: bootstrapToken, commitPaths: paths, persist: persist)
    }

    private init(staged: Contents, bootstrapToken: String?, commitPaths: StoragePaths, persist: Bool) {
        paths = nil
        self.commitPaths = commitPaths
        self.persist = persist
        contents = staged
        self.bootstrapToken = bootstrapToken
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
        self.bootstrapToken = bootstrapToken
        try save()
    }

    /// The `auth` for a role: password when set; `token` = shared token, else the role's device token;
    /// the bootstrap token only when no token resolved (and only for the node role).
    package func auth(for role: GatewayRole) -> ConnectAuth {
        var a = ConnectAuth(password: contents.password)
        a.token = contents.sharedToken ?? contents.deviceTokens[role.rawValue]?.deviceToken
        if a.token == nil, role == .node { a.bootstrapToken = bootstrapToken }
        return a
    }

    /// What the one retry after a refused shared token needs for a role; nil when no shared token is configured.
    package func deviceTokenRetry(for role: GatewayRole, trustedEndpoint: Bool) -> DeviceTokenRetry? {
        guard let shared = contents.sharedToken else { return nil }
        return DeviceTokenRetry(trustedEndpoint: trustedEndpoint, sharedToken: shared,
                                deviceToken: contents.deviceTokens[role.rawValue]?.deviceToken)
    }

    /// Operator scopes: what the stored operator token carries, else read + write.
    package func operatorScopes() -> [String] {
        contents.deviceTokens[GatewayRole.operator.rawValue]?.scopes ?? ["operator.read", "operator.write"]
    }

    /// Whether the operator socket has anything to authenticate with yet.
    package var hasOperatorCredential: Bool {
        contents.sharedToken != nil || contents.password != nil || contents.deviceTokens["operator"] != nil
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
        if contents.deviceTokens["node"] != nil { bootstrapToken = nil }
        try save()
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
