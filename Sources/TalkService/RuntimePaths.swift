import Foundation
import Glibc

/// Where the daemon keeps its files, from the XDG variables (tests pass their own environment).
package struct RuntimePaths: Sendable, Equatable {
    /// Control socket and status.json. Owner-only (0700): `$XDG_RUNTIME_DIR/openclaw-talk`; without that variable
    /// (cron, su, ssh without pam_systemd) `/run/user/<uid>/openclaw-talk` when the login manager made that folder,
    /// else `/tmp/openclaw-talk-<uid>`, which `ensurePrivateDirectory` refuses unless it is ours and private.
    package var runtimeDirectory: String
    /// `$XDG_STATE_HOME/openclaw-talk`: the log file, the instance lock, and (SessionBridge's) identity and outbox.
    package var stateDirectory: String
    /// `$XDG_CONFIG_HOME/openclaw-talk`: config.json.
    package var configDirectory: String

    package init(runtimeDirectory: String, stateDirectory: String, configDirectory: String) {
        self.runtimeDirectory = runtimeDirectory
        self.stateDirectory = stateDirectory
        self.configDirectory = configDirectory
    }

    /// The folders for `uid`; `runUserRoot` and `temporaryRoot` are `/run/user` and `/tmp` but for tests.
    package init(environment: [String: String] = ProcessInfo.processInfo.environment, uid: uid_t = getuid(),
                 runUserRoot: String = "/run/user", temporaryRoot: String = "/tmp") {
        let home = environment["HOME"] ?? NSHomeDirectory()
        func base(_ key: String, _ fallback: String) -> String {
            guard let v = environment[key], v.hasPrefix("/") else { return fallback }
            return v
        }
        let runtime: String
        if let xdg = environment["XDG_RUNTIME_DIR"], xdg.hasPrefix("/") {
            runtime = xdg + "/openclaw-talk"
        } else if Self.isPrivateFolder(runUserRoot + "/\(uid)", of: uid) {
            runtime = runUserRoot + "/\(uid)/openclaw-talk"
        } else {
            // Any local user can create a name in /tmp first: the folder itself is checked before each use.
            runtime = temporaryRoot + "/openclaw-talk-\(uid)"
        }
        self.init(
            runtimeDirectory: runtime,
            stateDirectory: base("XDG_STATE_HOME", home + "/.local/state") + "/openclaw-talk",
            configDirectory: base("XDG_CONFIG_HOME", home + "/.config") + "/openclaw-talk")
    }

    /// A folder the daemon will not use: made by someone else, a link, or writable by others.
    package struct UnsafeFolder: Error, Equatable, CustomStringConvertible {
        package var path: String
        package var reason: String
        package var description: String { "\(path) \(reason); refusing to use it" }
    }

    package var socketPath: String { runtimeDirectory + "/control.sock" }
    package var statusPath: String { runtimeDirectory + "/status.json" }
    /// With the state, not the runtime folder: `XDG_RUNTIME_DIR` differs between a systemd unit and a `start` from
    /// a shell without a login session, and two daemons would then share one identity and one outbox.
    package var lockPath: String { stateDirectory + "/daemon.lock" }
    package var logPath: String { stateDirectory + "/daemon.log" }
    package var configPath: String { configDirectory + "/config.json" }

    /// Makes `path` (its missing parents too) and checks it before anything goes in it: a directory, not a link,
    /// owned by us, and writable by no one else. A folder of ours that others may only read or enter is tightened
    /// to 0700; anything else is refused (`UnsafeFolder`), since whoever could write into it could swap the socket
    /// or plant links that make the daemon truncate another file.
    package static func ensurePrivateDirectory(_ path: String) throws {
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path { try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) }
        if mkdir(path, 0o700) != 0, errno != EEXIST { throw UnixSocket.Failure(call: "mkdir \(path)", code: errno) }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw UnixSocket.Failure(call: "lstat \(path)", code: errno) }
        if info.st_mode & S_IFMT == S_IFLNK { throw UnsafeFolder(path: path, reason: "is a symbolic link") }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw UnsafeFolder(path: path, reason: "is not a directory") }
        guard info.st_uid == getuid() else {
            throw UnsafeFolder(path: path, reason: "belongs to uid \(info.st_uid), not to you (uid \(getuid()))")
        }
        guard info.st_mode & 0o022 == 0 else {
            throw UnsafeFolder(path: path, reason: "may be written by other users (mode \(String(info.st_mode & 0o7777, radix: 8))); "
                + "check what is in it, then remove it or chmod 700 it")
        }
        if info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 { throw UnixSocket.Failure(call: "chmod \(path)", code: errno) }
    }

    /// A directory (not a link) of `uid`'s that no one else may write into.
    static func isPrivateFolder(_ path: String, of uid: uid_t) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == uid && info.st_mode & 0o022 == 0
    }
}
