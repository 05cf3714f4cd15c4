import Foundation

/// What an installation (the Debian package, `make install`) left for systemd and the shell: the user unit it
/// installed and the binary that unit starts, so `install-service` points a unit at an installed binary and
/// does not shadow a packaged unit with a copy in `~/.config`.
package enum InstalledService {
    /// Folders systemd reads user units from that an installation writes to, in systemd's order:
    /// `make install PREFIX=~/.local` uses the first, `/usr/local` and the package the last two.
    package static func unitFolders(environment: [String: String]) -> [String] {
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return [dataHome + "/systemd/user", "/usr/local/share/systemd/user", "/usr/share/systemd/user",
                "/usr/local/lib/systemd/user", "/usr/lib/systemd/user"]
    }

    /// The first installed unit and the binary its `ExecStart=` names.
    package static func installedUnit(environment: [String: String]) -> (path: String, binary: String?)? {
        for folder in unitFolders(environment: environment) {
            let path = folder + "/" + UserServiceInstaller.unitName
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            return (path, execStartBinary(unit: text))
        }
        return nil
    }

    /// The program of a unit's `ExecStart=` line (its first word, unquoted, systemd's `\xNN` escapes and `%%` undone).
    package static func execStartBinary(unit: String) -> String? {
        guard let line = unit.split(separator: "\n").first(where: { $0.hasPrefix("ExecStart=") }) else { return nil }
        var rest = Substring(line.dropFirst("ExecStart=".count))
        while let first = rest.first, "@-:+!".contains(first) { rest = rest.dropFirst() }
        let word: Substring
        if rest.first == "\"" {
            word = rest.dropFirst().prefix { $0 != "\"" }
        } else {
            word = rest.prefix { $0 != " " }
        }
        return unescape(String(word)).replacingOccurrences(of: "%%", with: "%")
    }

    private static func unescape(_ word: String) -> String {
        var out = ""
        var chars = word[...]
        while let c = chars.first {
            chars = chars.dropFirst()
            if c == "\\", chars.first == "x", let code = UInt8(String(chars.dropFirst().prefix(2)), radix: 16) {
                out.append(Character(UnicodeScalar(code)))
                chars = chars.dropFirst(3)
            } else if c == "\\", let next = chars.first {
                out.append(next)
                chars = chars.dropFirst()
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// An installed `openclaw-talk`: the first on `PATH` that is not in a build folder (`.build/`).
    package static func installedBinary(environment: [String: String], name: String = "openclaw-talk") -> String? {
        for folder in (environment["PATH"] ?? "").split(separator: ":").map(String.init) where folder.hasPrefix("/") {
            let candidate = folder + "/" + name
            guard FileManager.default.isExecutableFile(atPath: candidate) else { continue }
            let resolved = URL(fileURLWithPath: candidate).resolvingSymlinksInPath().path
            if !isBuildFolderBinary(resolved) { return resolved }
        }
        return nil
    }

    /// A binary inside a SwiftPM build folder, which `swift build` replaces and `make clean` removes.
    package static func isBuildFolderBinary(_ path: String) -> Bool {
        path.contains("/.build/") || path.contains("/.build-")
    }
}
