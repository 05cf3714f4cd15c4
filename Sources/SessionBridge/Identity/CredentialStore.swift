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
    private var contents: Contents
    /// A bootstrap token from a fresh setup code: used (node role) until a node device token arrives.
    private var bootstrapToken: String?
    /// False when tokens came over an endpoint where storing them is unsafe (plaintext to a non-local host).
    private let persist: Bool

    /// Loads the stored secrets for `paths` (nil paths keep everything in memory, for benchmarks).
    package init(paths: StoragePaths?, persist: Bool = true) throws {
        self.paths = paths
        self.persist = persist
        if let paths, let bytes = try SecureStore.readPrivateFile(paths.tokensFile) {
            do { contents = try JSONDecoder().decode(Contents.self, from: Data(bytes)) } catch {
                throw StorageError.damaged(path: paths.tokensFile, reason: "not a token file")
            }
        } else {
            contents = Contents()
        }
    }

    package var snapshot: Contents { contents }

    /// Starts over for a new Gateway (or a fresh setup code): old device tokens are dropped, since a new
    /// code forces the bootstrap path.
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
        try SecureStore.preparePrivateDirectory(paths.stateDirectory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try SecureStore.writeFile(paths.tokensFile, Array(try encoder.encode(contents)), mode: 0o600)
    }
}
