import Foundation

/// The Gateway this install talks to: not secret, kept in `$XDG_CONFIG_HOME/openclaw-talk/gateway.json`.
package struct GatewayConfig: Sendable, Equatable, Codable {
    package var url: String
    /// The trusted SHA-256 of the Gateway's leaf certificate (lowercase hex), when pinned.
    package var tlsFingerprint: String?
    package var displayName: String?

    package init(url: String, tlsFingerprint: String? = nil, displayName: String? = nil) {
        self.url = url
        self.tlsFingerprint = tlsFingerprint
        self.displayName = displayName
    }

    /// The stored configuration, or nil before setup.
    package static func load(paths: StoragePaths) throws -> GatewayConfig? {
        guard let bytes = try SecureStore.readFile(paths.configFile) else { return nil }
        do { return try JSONDecoder().decode(GatewayConfig.self, from: Data(bytes)) } catch {
            throw StorageError.damaged(path: paths.configFile, reason: "not a Gateway configuration")
        }
    }

    package func save(paths: StoragePaths) throws {
        try SecureStore.prepareDirectory(paths.configDirectory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try SecureStore.writeFile(paths.configFile, Array(try encoder.encode(self)), mode: 0o644)
    }
}
