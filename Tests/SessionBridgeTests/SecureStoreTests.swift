import Foundation
import Testing

@testable import SessionBridge

/// The owner-only store refuses what someone else could have touched, as ssh does.
@Suite struct SecureStoreTests {
    @Test func `a temporary file planted at a guessable name is neither used nor overwritten`() throws {
        let root = try TempDir()
        let paths = StoragePaths.under(root.path)
        try SecureStore.preparePrivateDirectory(paths.stateDirectory)
        let file = paths.stateDirectory + "/secret.json"
        let planted = file + ".tmp-\(getpid())"
        try SecureStore.writeFile(planted, Array("planted".utf8))
        try SecureStore.writeFile(file, Array("mine".utf8))
        #expect(try SecureStore.readPrivateFile(file) == Array("mine".utf8))
        #expect(try SecureStore.readPrivateFile(planted) == Array("planted".utf8))
        // Nothing else is left in the folder: the temporary file became the file.
        let left = try FileManager.default.contentsOfDirectory(atPath: paths.stateDirectory).sorted()
        #expect(left == ["secret.json", "secret.json.tmp-\(getpid())"])
    }

    @Test func `a secret below a folder others may write to is refused`() throws {
        let root = try TempDir()
        let paths = StoragePaths.under(root.path)
        _ = try DeviceIdentity.loadOrCreate(paths: paths)
        let shared = root.path + "/state"
        chmod(shared, 0o777)
        defer { chmod(shared, 0o755) }
        #expect {
            _ = try DeviceIdentity.loadOrCreate(paths: paths)
        } throws: { error in
            "\(error)".contains("/state (permissions 777) may be changed by other users")
        }
    }

    @Test func `a link in place of a secret is refused without reading its target`() throws {
        let root = try TempDir()
        let paths = StoragePaths.under(root.path)
        try SecureStore.preparePrivateDirectory(paths.stateDirectory)
        let target = root.path + "/elsewhere.json"
        try SecureStore.writeFile(target, Array("{}".utf8))
        symlink(target, paths.tokensFile)
        #expect(throws: StorageError.notARegularFile(paths.tokensFile)) {
            _ = try CredentialStore(paths: paths)
        }
    }
}

/// Stored credentials are only ever used with the Gateway they were stored for.
@Suite struct StoredSetupTests {
    @Test func `credentials stored for another Gateway than gateway.json names are refused, not sent`() async throws {
        let root = try TempDir()
        let paths = StoragePaths.under(root.path)
        try GatewayConfig(url: "ws://127.0.0.1:18789").save(paths: paths)
        try await CredentialStore(paths: paths).beginSetup(
            gatewayURL: "ws://127.0.0.1:28789", bootstrapToken: nil, sharedToken: "b-token", password: nil)
        #expect(throws: StoredSetupError.credentialsForAnotherGateway(configured: "ws://127.0.0.1:18789", credentials: "ws://127.0.0.1:28789")) {
            _ = try GatewaySession.fromStoredSetup(paths: paths, version: "0.1.0-test", logger: .init(label: "test"))
        }
        #expect("\(StoredSetupError.credentialsForAnotherGateway(configured: "a", credentials: "b"))".contains("Run 'openclaw-talk setup' again"))
    }

    @Test func `a staged store writes nothing until it is committed`() async throws {
        let root = try TempDir()
        let paths = StoragePaths.under(root.path)
        try await CredentialStore(paths: paths).beginSetup(gatewayURL: "ws://127.0.0.1:1", bootstrapToken: nil, sharedToken: "old", password: nil)
        let before = try SecureStore.readPrivateFile(paths.tokensFile)
        let staged = try CredentialStore.staged(paths: paths, gatewayURL: "ws://127.0.0.1:2", bootstrapToken: "boot",
                                                sharedToken: "new", password: nil, persist: true)
        #expect(await staged.auth(for: .node).token == "new")
        #expect(try SecureStore.readPrivateFile(paths.tokensFile) == before)
        try await staged.commit()
        #expect(try await CredentialStore(paths: paths, gatewayURL: "ws://127.0.0.1:2").snapshot.sharedToken == "new")
    }
}
