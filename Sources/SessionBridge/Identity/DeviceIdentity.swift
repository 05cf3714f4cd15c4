import Foundation

/// This install's Ed25519 device identity, made once and kept in the state folder (0600 file, 0700 folder).
/// The private seed never leaves this type except to sign; `description` shows only the device id.
package struct DeviceIdentity: Sendable, CustomStringConvertible {
    /// Lowercase hex SHA-256 of the raw 32-byte public key (what the Gateway calls `device.id`).
    package let deviceId: String
    /// The raw public key, base64url without padding.
    package let publicKeyBase64URL: String
    /// A stable id for this install (`client.instanceId`).
    package let instanceId: String
    private let seed: [UInt8]

    /// An identity from a known seed (tests, RFC vectors).
    package init(seed: [UInt8], instanceId: String) throws(CryptoError) {
        let pair = try Ed25519.keyPair(seed: seed)
        self.seed = seed
        self.deviceId = Digest.hex(Digest.sha256(pair.publicKey))
        self.publicKeyBase64URL = Base64URL.encode(pair.publicKey)
        self.instanceId = instanceId
    }

    /// Signs the UTF-8 bytes of `payload`; the signature in base64url without padding.
    package func sign(_ payload: String) throws(CryptoError) -> String {
        Base64URL.encode(try Ed25519.sign(Array(payload.utf8), seed: seed))
    }

    package var description: String { "DeviceIdentity(\(deviceId))" }

    /// Loads the identity from `paths.stateDirectory`, creating it on first use.
    package static func loadOrCreate(paths: StoragePaths) throws -> DeviceIdentity {
        try SecureStore.preparePrivateDirectory(paths.stateDirectory)
        let file = paths.identityFile
        if let bytes = try SecureStore.readPrivateFile(file) {
            let stored: Stored
            do { stored = try JSONDecoder().decode(Stored.self, from: Data(bytes)) } catch {
                throw StorageError.damaged(path: file, reason: "not an identity file")
            }
            guard stored.version == 1, let seed = Base64URL.decode(stored.privateKey), seed.count == 32,
                  !stored.instanceId.isEmpty
            else { throw StorageError.damaged(path: file, reason: "bad key or instance id") }
            let identity = try DeviceIdentity(seed: seed, instanceId: stored.instanceId)
            guard identity.publicKeyBase64URL == stored.publicKey else {
                throw StorageError.damaged(path: file, reason: "the public key does not match the private key")
            }
            return identity
        }
        let pair = try Ed25519.generate()
        let identity = try DeviceIdentity(seed: pair.seed, instanceId: UUID().uuidString.lowercased())
        let stored = Stored(
            version: 1, deviceId: identity.deviceId, publicKey: identity.publicKeyBase64URL,
            privateKey: Base64URL.encode(pair.seed), instanceId: identity.instanceId,
            createdAtMs: Int64(Date().timeIntervalSince1970 * 1000))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try SecureStore.writeFile(file, Array(try encoder.encode(stored)), mode: 0o600)
        return identity
    }

    private struct Stored: Codable {
        var version: Int
        var deviceId: String
        var publicKey: String
        var privateKey: String
        var instanceId: String
        var createdAtMs: Int64
    }
}
