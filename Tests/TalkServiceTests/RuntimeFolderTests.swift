import Foundation
import Glibc
import TalkTestSupport
import Testing
@testable import TalkService

/// The runtime folder holds the control socket, status.json and the files the daemon truncates and renames: no
/// other local user may create it first, swap it, or plant links in it. (Tests run as root, which can make folders
/// and links owned by any uid, so they play the other user.)
@Suite struct RuntimeFolderTests {
    static let stranger: uid_t = 4242

    /// `/run/user` and `/tmp` stand-ins under a private folder.
    struct Roots {
        let folder: TemporaryFolder
        var runUser: String { folder.path + "/run-user" }
        var tmp: String { folder.path + "/tmp" }
        init() throws {
            folder = try TemporaryFolder()
            for p in [runUser, tmp] { mkdir(p, 0o755) }
            chmod(tmp, 0o1777)
        }
        func paths(_ environment: [String: String] = ["HOME": "/home/nobody"]) -> RuntimePaths {
            RuntimePaths(environment: environment, uid: getuid(), runUserRoot: runUser, temporaryRoot: tmp)
        }
    }

    @Test func `without XDG_RUNTIME_DIR the folder is /run/user/<uid> when the login session made it`() throws {
        let roots = try Roots()
        #expect(mkdir(roots.runUser + "/\(getuid())", 0o700) == 0)
        #expect(roots.paths().runtimeDirectory == roots.runUser + "/\(getuid())/openclaw-talk")
        // XDG_RUNTIME_DIR still wins.
        #expect(roots.paths(["XDG_RUNTIME_DIR": "/run/x"]).runtimeDirectory == "/run/x/openclaw-talk")
    }

    @Test func `without a login session the per-uid folder in /tmp is made 0700 and used`() throws {
        let roots = try Roots()
        let paths = roots.paths()
        #expect(paths.runtimeDirectory == roots.tmp + "/openclaw-talk-\(getuid())")
        try RuntimePaths.ensurePrivateDirectory(paths.runtimeDirectory)
        var info = stat()
        #expect(lstat(paths.runtimeDirectory, &info) == 0 && info.st_mode & 0o7777 == 0o700 && info.st_uid == getuid())
    }

    @Test func `a per-uid folder another user made first is refused`() throws {
        let roots = try Roots()
        let paths = roots.paths()
        #expect(mkdir(paths.runtimeDirectory, 0o777) == 0 && chown(paths.runtimeDirectory, Self.stranger, Self.stranger) == 0)
        chmod(paths.runtimeDirectory, 0o777)
        #expect(throws: RuntimePaths.UnsafeFolder.self) { try RuntimePaths.ensurePrivateDirectory(paths.runtimeDirectory) }
        #expect(!FileManager.default.fileExists(atPath: paths.socketPath))
    }

    @Test func `a link in place of the folder is refused, even to a folder of ours`() throws {
        let roots = try Roots()
        let paths = roots.paths()
        let ours = roots.folder.path + "/ours"
        #expect(mkdir(ours, 0o700) == 0)
        #expect(symlink(ours, paths.runtimeDirectory) == 0)
        lchown(paths.runtimeDirectory, Self.stranger, Self.stranger)
        #expect(throws: RuntimePaths.UnsafeFolder.self) { try RuntimePaths.ensurePrivateDirectory(paths.runtimeDirectory) }
    }

    @Test func `a folder of ours that others may write into is refused`() throws {
        let roots = try Roots()
        let paths = roots.paths()
        #expect(mkdir(paths.runtimeDirectory, 0o700) == 0)
        chmod(paths.runtimeDirectory, 0o777)
        #expect(throws: RuntimePaths.UnsafeFolder.self) { try RuntimePaths.ensurePrivateDirectory(paths.runtimeDirectory) }
        // Group and others reading it only: ours, so it is tightened.
        chmod(paths.runtimeDirectory, 0o755)
        try RuntimePaths.ensurePrivateDirectory(paths.runtimeDirectory)
        var info = stat()
        #expect(lstat(paths.runtimeDirectory, &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    /// A victim's file the links point at: the daemon must neither truncate nor replace it.
    static func victim(in folder: TemporaryFolder) -> String {
        let path = folder.path + "/victim.txt"
        FileManager.default.createFile(atPath: path, contents: Data("precious\n".utf8))
        return path
    }

    @Test func `a link planted as status.json.tmp does not make the daemon overwrite its target`() throws {
        let folder = try TemporaryFolder()
        try RuntimePaths.ensurePrivateDirectory(folder.paths.runtimeDirectory)
        let victim = Self.victim(in: folder)
        #expect(symlink(victim, folder.paths.statusPath + ".tmp") == 0)
        let file = StatusFile(path: folder.paths.statusPath)
        let status = ServiceStatus(state: "idle", talk: .init(active: false), gateway: .init(connected: false, state: "connected"),
                                   audio: .init(), pid: 1, stale: false)
        try? file.write(status)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        // The status is still written (the link was the temporary file's name, which is not used).
        try file.write(status)
        #expect(try file.read().state == "idle")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
    }

    @Test func `a link planted as the lock file is refused, and its target left alone`() throws {
        let folder = try TemporaryFolder()
        let victim = Self.victim(in: folder)
        let lock = folder.path + "/daemon.lock"
        #expect(symlink(victim, lock) == 0)
        #expect(throws: InstanceLock.Failure.self) { try InstanceLock.acquire(path: lock) }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
    }

    /// systemd's unit sees /run/user, a `start` from ssh without pam_systemd /tmp: one state, so one lock.
    @Test func `the instance lock lives with the state, whatever XDG_RUNTIME_DIR says`() throws {
        let folder = try TemporaryFolder()
        let state = folder.path + "/state"
        let first = RuntimePaths(environment: ["HOME": folder.path, "XDG_STATE_HOME": state, "XDG_RUNTIME_DIR": folder.path + "/a"])
        let second = RuntimePaths(environment: ["HOME": folder.path, "XDG_STATE_HOME": state, "XDG_RUNTIME_DIR": folder.path + "/b"])
        #expect(first.lockPath.hasPrefix(first.stateDirectory + "/"))
        try RuntimePaths.ensurePrivateDirectory(first.stateDirectory)
        let held = try InstanceLock.acquire(path: first.lockPath)
        defer { held.release() }
        #expect(throws: InstanceLock.Failure.alreadyRunning(pid: getpid())) { try InstanceLock.acquire(path: second.lockPath) }
    }
}
