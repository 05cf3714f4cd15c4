import Foundation
import Testing

@testable import SessionBridge

@Suite struct DeviceIdentityTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            out.append(UInt8(hex[i..<j], radix: 16) ?? 0)
            i = j
        }
        return out
    }

    @Test func `RFC 8032 test vector 1 gives the published key and signature`() throws {
        let seed = Self.bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
        let pair = try Ed25519.keyPair(seed: seed)
        #expect(Digest.hex(pair.publicKey) == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let sig = try Ed25519.sign([], seed: seed)
        #expect(Digest.hex(sig) == "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        #expect(Ed25519.verify(sig, of: [], publicKey: pair.publicKey))
        #expect(!Ed25519.verify(sig, of: [0], publicKey: pair.publicKey))
    }

    @Test func `device id is the hex SHA-256 of the raw public key and keys are unpadded base64url`() throws {
        let seed = Self.bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
        let id = try DeviceIdentity(seed: seed, instanceId: "i")
        let pub = Self.bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        #expect(id.deviceId == Digest.hex(Digest.sha256(pub)))
        #expect(id.deviceId.count == 64)
        #expect(id.publicKeyBase64URL == "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
        let sig = try id.sign("hello")
        #expect(!sig.contains("=") && !sig.contains("+") && !sig.contains("/"))
        #expect(Ed25519.verify(Base64URL.decode(sig) ?? [], of: Array("hello".utf8), publicKey: pub))
        #expect(!"\(id)".contains(Base64URL.encode(seed)))
    }

    @Test func `the identity is made once and kept in a 0600 file inside a 0700 folder`() throws {
        let root = try TempDir()
        let paths = StoragePaths.under(root.path)
        let first = try DeviceIdentity.loadOrCreate(paths: paths)
        let again = try DeviceIdentity.loadOrCreate(paths: paths)
        #expect(first.deviceId == again.deviceId)
        #expect(first.instanceId == again.instanceId)
        #expect(try mode(paths.stateDirectory) == 0o700)
        #expect(try mode(paths.identityFile) == 0o600)
    }

    @Test func `a looser state folder is tightened, but a key file others may read is refused and left as it is`() throws {
        let root = try TempDir()
        let paths = StoragePaths.under(root.path)
        let made = try DeviceIdentity.loadOrCreate(paths: paths)
        chmod(paths.stateDirectory, 0o755)
        _ = try DeviceIdentity.loadOrCreate(paths: paths)
        #expect(try mode(paths.stateDirectory) == 0o700)
        chmod(paths.identityFile, 0o640)
        // As ssh refuses a private key others can read: the key may have leaked, so it is not silently fixed.
        #expect {
            _ = try DeviceIdentity.loadOrCreate(paths: paths)
        } throws: { error in
            let text = "\(error)"
            return text.contains("too open") && text.contains("640") && text.contains("chmod 600 \(paths.identityFile)")
        }
        #expect(try mode(paths.identityFile) == 0o640)
        chmod(paths.identityFile, 0o600)
        #expect(try DeviceIdentity.loadOrCreate(paths: paths).deviceId == made.deviceId)
    }

    @Test func `a damaged identity file gives a clear error instead of a new identity`() throws {
        let root = try TempDir()
        let paths = StoragePaths.under(root.path)
        try SecureStore.preparePrivateDirectory(paths.stateDirectory)
        try SecureStore.writeFile(paths.identityFile, Array("{not json".utf8))
        #expect {
            _ = try DeviceIdentity.loadOrCreate(paths: paths)
        } throws: { error in
            "\(error)".contains("damaged")
        }
    }

    @Test func `a symbolic link in place of the identity file is refused`() throws {
        let root = try TempDir()
        let paths = StoragePaths.under(root.path)
        try SecureStore.preparePrivateDirectory(paths.stateDirectory)
        symlink("/etc/hostname", paths.identityFile)
        #expect(throws: StorageError.notARegularFile(paths.identityFile)) {
            _ = try DeviceIdentity.loadOrCreate(paths: paths)
        }
    }

    @Test func `XDG variables choose the folders, with the home defaults otherwise`() {
        let xdg = StoragePaths.standard(environment: ["HOME": "/h", "XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "/c"])
        #expect(xdg == StoragePaths(stateDirectory: "/s/openclaw-talk", configDirectory: "/c/openclaw-talk"))
        let plain = StoragePaths.standard(environment: ["HOME": "/h", "XDG_STATE_HOME": "relative"])
        #expect(plain == StoragePaths(stateDirectory: "/h/.local/state/openclaw-talk", configDirectory: "/h/.config/openclaw-talk"))
    }

    private func mode(_ path: String) throws -> mode_t {
        var st = stat()
        guard stat(path, &st) == 0 else { throw StorageError.io(path: path, errno: errno) }
        return st.st_mode & 0o777
    }
}

/// A private temporary folder removed when the value goes away.
final class TempDir: Sendable {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/oct-test-XXXXXX").utf8CString)
        guard let p = mkdtemp(&template) else { throw StorageError.io(path: "mkdtemp", errno: errno) }
        path = String(cString: p)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
