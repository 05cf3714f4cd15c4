import Foundation

/// The file managers' "Send to OpenClaw" action (contrib/desktop/), which runs `openclaw-talk send --notify --file
/// FILE`: `install-service` writes it for the user, beside the unit, naming the binary the unit starts (a file
/// manager started from the desktop may not have the user's PATH). `make install` and the package install the
/// contrib files, which name `openclaw-talk` on PATH; a test keeps them and these templates in step.
package enum FileManagerActions {
    /// One action file: where it goes under the data folder, and its text.
    package struct File: Equatable, Sendable {
        package var relativePath: String
        package var contents: String
        /// KDE reads a service menu from the user's folder only when it is executable (KIO 5.85 and later).
        package var executable: Bool
    }

    package enum Failure: Error, CustomStringConvertible {
        case unrepresentable(String)
        package var description: String {
            switch self {
            case .unrepresentable(let path):
                "The path \(path.debugDescription) cannot be written in a desktop file's Exec line (it has a line break)."
            }
        }
    }

    /// The three formats, with `binary` as the program of each Exec line. Nemo's is left out when the path has a `%`,
    /// which Nemo would read as one of its tokens (it has no escape for it).
    package static func files(binary: String) throws -> [File] {
        guard !binary.contains(where: \.isNewline) else { throw Failure.unrepresentable(binary) }
        let desktop = desktopEntryArgument(binary)
        var files = [
            File(relativePath: "file-manager/actions/openclaw-talk-send.desktop",
                 contents: fileManagerAction.replacingOccurrences(of: "@EXEC@", with: desktop), executable: false),
            File(relativePath: "kio/servicemenus/openclaw-talk-send.desktop",
                 contents: kdeServiceMenu.replacingOccurrences(of: "@EXEC@", with: desktop), executable: true),
        ]
        if !binary.contains("%") {
            files.append(File(relativePath: "nemo/actions/openclaw-talk-send.nemo_action",
                              contents: nemoAction.replacingOccurrences(of: "@EXEC@", with: shellArgument(binary)),
                              executable: false))
        }
        return files
    }

    /// `$XDG_DATA_HOME` (default `~/.local/share`): where file managers look for a user's actions.
    package static func dataHome(environment: [String: String]) -> String {
        environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
    }

    /// Writes the actions under the user's data folder and returns the paths written.
    package static func install(binary: String, environment: [String: String]) throws -> [String] {
        let home = dataHome(environment: environment)
        var written: [String] = []
        for file in try files(binary: binary) {
            let path = home + "/" + file.relativePath
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try Data(file.contents.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: file.executable ? 0o755 : 0o644], ofItemAtPath: path)
            written.append(path)
        }
        return written
    }

    /// `path` as one argument of a Desktop Entry Exec key (Desktop Entry Specification, "The Exec key"): quoted when
    /// it has a reserved character, with `"`, `` ` ``, `$` and `\` escaped inside the quotes; then the string-value
    /// escape (`\` doubled again); `%` doubled everywhere, so no field code is read in it.
    package static func desktopEntryArgument(_ path: String) -> String {
        let reserved = Set(" \t\"'\\><~|&;$*?#()`")
        let percent = path.replacingOccurrences(of: "%", with: "%%")
        guard percent.contains(where: { reserved.contains($0) }) else { return percent }
        var quoted = "\""
        for c in percent {
            if "\"`$\\".contains(c) { quoted += "\\" }
            quoted.append(c)
        }
        quoted += "\""
        return quoted.replacingOccurrences(of: "\\", with: "\\\\")
    }

    /// `path` as one word of a shell-like command line (Nemo splits its Exec with GLib's g_shell_parse_argv).
    package static func shellArgument(_ path: String) -> String {
        guard path.contains(where: { !($0.isLetter || $0.isNumber || "/._-+,:@".contains($0)) }) else { return path }
        return "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    static let fileManagerAction = """
        # "Send to OpenClaw" for file managers that read the FileManager-Actions format (PCManFM, PCManFM-Qt,
        # Caja with caja-actions, Nautilus with filemanager-actions): $XDG_DATA_DIRS/file-manager/actions/.
        # It runs `openclaw-talk send --notify --file FILE`: the reply, or why nothing was sent, comes back as a notification.
        [Desktop Entry]
        Type=Action
        Name=Send to OpenClaw
        Tooltip=Send the file to your OpenClaw assistant's chat
        Icon=document-send
        Profiles=send;

        [X-Action-Profile send]
        Name=Send to OpenClaw
        Exec=@EXEC@ send --notify --file %f
        MimeTypes=all/allfiles;
        SelectionCount=>0

        """

    static let kdeServiceMenu = """
        # "Send to OpenClaw" in Dolphin's context menu (KDE service menu: share/kio/servicemenus/).
        # It runs `openclaw-talk send --notify --file FILE`: the reply, or why nothing was sent, comes back as a notification.
        [Desktop Entry]
        Type=Service
        MimeType=all/allfiles;
        X-KDE-ServiceTypes=KonqPopupMenu/Plugin
        Actions=send;

        [Desktop Action send]
        Name=Send to OpenClaw
        Icon=document-send
        Exec=@EXEC@ send --notify --file %f

        """

    static let nemoAction = """
        # "Send to OpenClaw" in Nemo's context menu (share/nemo/actions/).
        # It runs `openclaw-talk send --notify --file FILE`: the reply, or why nothing was sent, comes back as a notification.
        [Nemo Action]
        Name=Send to OpenClaw
        Comment=Send %N to your OpenClaw assistant's chat
        Exec=@EXEC@ send --notify --file %F
        Icon-Name=document-send
        Selection=s
        Extensions=any;

        """
}
