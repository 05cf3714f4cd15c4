import Foundation
import TalkTestSupport
import Testing
@testable import TalkService

/// The "Send to OpenClaw" action `install-service` writes: the repository's files (what `make install` and the package
/// install) with the binary in each Exec line, written as each format reads a path with spaces, quotes and `%`.
@Suite struct FileManagerActionsTests {
    static let contrib = [
        "file-manager/actions/openclaw-talk-send.desktop": "openclaw-talk-send.desktop",
        "kio/servicemenus/openclaw-talk-send.desktop": "openclaw-talk-send-kde.desktop",
        "nemo/actions/openclaw-talk-send.nemo_action": "openclaw-talk-send.nemo_action",
    ]

    @Test func `with openclaw-talk on PATH the actions are the repository's files`() throws {
        let files = try FileManagerActions.files(binary: "openclaw-talk")
        #expect(Set(files.map(\.relativePath)) == Set(Self.contrib.keys))
        for file in files {
            let name = try #require(Self.contrib[file.relativePath])
            let repository = try String(contentsOfFile: TestInputs.packageRoot + "/contrib/desktop/" + name, encoding: .utf8)
            #expect(file.contents == repository, "\(name)")
        }
    }

    @Test func `install writes each action under the user's data folder, naming the binary`() throws {
        let folder = try TemporaryFolder()
        let written = try FileManagerActions.install(binary: "/opt/talk/bin/openclaw-talk",
                                                     environment: ["HOME": folder.path])
        #expect(written.sorted() == Self.contrib.keys.map { folder.path + "/.local/share/" + $0 }.sorted())
        let action = try String(contentsOfFile: folder.path + "/.local/share/file-manager/actions/openclaw-talk-send.desktop",
                                encoding: .utf8)
        #expect(action.contains("\nExec=/opt/talk/bin/openclaw-talk send --notify --file %f\n"))
        let nemo = try String(contentsOfFile: folder.path + "/.local/share/nemo/actions/openclaw-talk-send.nemo_action",
                              encoding: .utf8)
        #expect(nemo.contains("\nExec=/opt/talk/bin/openclaw-talk send --notify --file %F\n"))
        func mode(_ relative: String) throws -> Int {
            try (FileManager.default.attributesOfItem(atPath: folder.path + "/.local/share/" + relative)[.posixPermissions] as? Int) ?? -1
        }
        #expect(try mode("kio/servicemenus/openclaw-talk-send.desktop") == 0o755)
        #expect(try mode("file-manager/actions/openclaw-talk-send.desktop") == 0o644)
        let data = try TemporaryFolder()
        let elsewhere = try FileManagerActions.install(binary: "/b/openclaw-talk", environment: ["HOME": folder.path, "XDG_DATA_HOME": data.path])
        #expect(elsewhere.allSatisfy { $0.hasPrefix(data.path + "/") })
    }

    @Test func `a path with reserved characters is quoted as the Desktop Entry spec and the shell read it`() throws {
        // Desktop Entry: quoted, with " ` $ \ escaped inside, then \ doubled again as a string value; % doubled.
        #expect(FileManagerActions.desktopEntryArgument("/usr/bin/openclaw-talk") == "/usr/bin/openclaw-talk")
        #expect(FileManagerActions.desktopEntryArgument("/opt/my apps/openclaw-talk") == #""/opt/my apps/openclaw-talk""#)
        #expect(FileManagerActions.desktopEntryArgument(#"/o/a"b`c$d\e/x"#) == #""/o/a\\"b\\`c\\$d\\\\e/x""#)
        #expect(FileManagerActions.desktopEntryArgument("/o/100%/x") == "/o/100%%/x")
        #expect(FileManagerActions.desktopEntryArgument("/o/100% x") == #""/o/100%% x""#)
        // Nemo splits its Exec as a shell would (g_shell_parse_argv).
        #expect(FileManagerActions.shellArgument("/opt/my apps/it's") == #"'/opt/my apps/it'\''s'"#)
        #expect(FileManagerActions.shellArgument("/usr/bin/openclaw-talk") == "/usr/bin/openclaw-talk")
        // Nemo has no escape for %: its action is left out rather than run with a token expanded in the path.
        let percent = try FileManagerActions.files(binary: "/o/100%/openclaw-talk").map(\.relativePath)
        #expect(!percent.contains { $0.hasPrefix("nemo/") } && percent.count == 2)
    }

    @Test func `a path with a line break is refused and nothing is written`() throws {
        let folder = try TemporaryFolder()
        #expect(throws: FileManagerActions.Failure.self) {
            try FileManagerActions.install(binary: "/o/a\nb/openclaw-talk", environment: ["HOME": folder.path])
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/.local/share"))
    }
}
