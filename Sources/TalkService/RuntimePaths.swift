import Foundation
import Glibc

/// Where the daemon keeps its files, from the XDG variables (tests pass their own environment).
package struct RuntimePaths: Sendable, Equatable {
    /// `$XDG_RUNTIME_DIR/openclaw-talk`: control socket, status.json, lock. Owner-only (0700).
    package var runtimeDirectory: String
    /// `$XDG_STATE_HOME/openclaw-talk`: the log file.
    package var stateDirectory: String
    /// `$XDG_CONFIG_HOME/openclaw-talk`: config.json.
    package var configDirectory: String

    package init(runtimeDirectory: String, stateDirectory: String, configDirectory: String) {
        self.runtimeDirectory = runtimeDirectory
        self.stateDirectory = stateDirectory
        self.configDirectory = configDirectory
    }

    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"] ?? NSHomeDirectory()
        func base(_ key: String, _ fallback: String) -> String {
            guard let v = environment[key], v.hasPrefix("/") else { return fallback }
            return v
        }
        // Without XDG_RUNTIME_DIR (no login session) a per-uid folder in /tmp stands in, as sd-login does not exist.
        let runtime = base("XDG_RUNTIME_DIR", "/tmp/openclaw-talk-\(getuid())")
        self.init(
            runtimeDirectory: runtime + "/openclaw-talk",
            stateDirectory: base("XDG_STATE_HOME", home + "/.local/state") + "/openclaw-talk",
            configDirectory: base("XDG_CONFIG_HOME", home + "/.config") + "/openclaw-talk")
    }

    package var socketPath: String { runtimeDirectory + "/control.sock" }
    package var statusPath: String { runtimeDirectory + "/status.json" }
    package var lockPath: String { runtimeDirectory + "/daemon.lock" }
    package var logPath: String { stateDirectory + "/daemon.log" }
    package var configPath: String { configDirectory + "/config.json" }

    /// Creates `path` (and its parents) and makes it 0700; a folder owned by someone else is refused,
    /// since whoever owns it could swap the socket.
    package static func ensurePrivateDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var info = stat()
        guard stat(path, &info) == 0 else { throw UnixSocket.Failure(call: "stat \(path)", code: errno) }
        guard info.st_uid == getuid() else {
            throw UnixSocket.Failure(call: "\(path) belongs to uid \(info.st_uid)", code: EPERM)
        }
        guard chmod(path, 0o700) == 0 else { throw UnixSocket.Failure(call: "chmod \(path)", code: errno) }
    }
}
