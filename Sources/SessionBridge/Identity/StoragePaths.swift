import Foundation

/// Where openclaw-talk keeps its files: secrets (identity, device tokens) in the XDG state folder,
/// plain settings (Gateway URL, certificate pin) in the XDG config folder.
package struct StoragePaths: Sendable, Equatable {
    /// `$XDG_STATE_HOME/openclaw-talk` (default `~/.local/state/openclaw-talk`): 0700, files 0600.
    package var stateDirectory: String
    /// `$XDG_CONFIG_HOME/openclaw-talk` (default `~/.config/openclaw-talk`).
    package var configDirectory: String

    package init(stateDirectory: String, configDirectory: String) {
        self.stateDirectory = stateDirectory
        self.configDirectory = configDirectory
    }

    /// The XDG locations for this user, from the given environment.
    package static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> StoragePaths {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        func xdg(_ name: String, _ fallback: String) -> String {
            // The XDG spec says relative paths are invalid and must be ignored.
            if let v = environment[name], v.hasPrefix("/") { return v }
            return home + "/" + fallback
        }
        return StoragePaths(
            stateDirectory: xdg("XDG_STATE_HOME", ".local/state") + "/openclaw-talk",
            configDirectory: xdg("XDG_CONFIG_HOME", ".config") + "/openclaw-talk")
    }

    /// Both folders under one root, for tests and benchmarks.
    package static func under(_ root: String) -> StoragePaths {
        StoragePaths(stateDirectory: root + "/state/openclaw-talk", configDirectory: root + "/config/openclaw-talk")
    }

    var identityFile: String { stateDirectory + "/device-identity.json" }
    var tokensFile: String { stateDirectory + "/device-tokens.json" }
    var configFile: String { configDirectory + "/gateway.json" }
}
