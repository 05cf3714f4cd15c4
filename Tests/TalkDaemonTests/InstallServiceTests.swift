import Foundation
import TalkTestSupport
import Testing

/// `install-service` run from the build folder, as a developer runs it after `make install`: the unit must start
/// the installed binary (a build folder's is replaced by the next build), and a unit the package or `make
/// install` installed for it is not shadowed by a copy in ~/.config.
@Suite(.requires(.builtBinary)) struct InstallServiceTests {
    /// A private folder with an "installed" openclaw-talk in bin/ (a script: it is never run).
    static func installedPrefix(_ command: BuiltCommand) throws -> String {
        let bin = command.home + "/prefix/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let binary = bin + "/openclaw-talk"
        FileManager.default.createFile(atPath: binary, contents: Data("#!/bin/sh\nexit 0\n".utf8), attributes: [.posixPermissions: 0o755])
        return URL(fileURLWithPath: binary).resolvingSymlinksInPath().path
    }

    @Test func `from a build folder the unit starts the installed binary found on PATH`() async throws {
        var command = try BuiltCommand()
        defer { command.removeHome() }
        let installed = try Self.installedPrefix(command)
        command.extraEnvironment = ["PATH": (installed as NSString).deletingLastPathComponent + ":/usr/bin:/bin",
                                    "XDG_DATA_HOME": command.home + "/data"]
        let out = try await command.run(["install-service"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("Using the installed \(installed)"))
        let unit = try String(contentsOfFile: command.home + "/config/systemd/user/openclaw-talk.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\"\(installed)\" run"))
        // The file managers' "Send to OpenClaw" action runs the same binary (issue 26: install-service installs it).
        let action = command.home + "/data/file-manager/actions/openclaw-talk-send.desktop"
        let text = try String(contentsOfFile: action, encoding: .utf8)
        #expect(text.contains("\nExec=\(installed) send --notify --file %f\n"), "\(text)")
        #expect(out.stdout.contains("Wrote \(action)"), "\(out.stdout)")
        for other in ["kio/servicemenus/openclaw-talk-send.desktop", "nemo/actions/openclaw-talk-send.nemo_action"] {
            #expect(FileManager.default.fileExists(atPath: command.home + "/data/" + other), "\(other)")
        }
    }

    @Test func `a unit already installed for that binary is not copied into the config folder`() async throws {
        var command = try BuiltCommand()
        defer { command.removeHome() }
        let installed = try Self.installedPrefix(command)
        let units = command.home + "/data/systemd/user"
        try FileManager.default.createDirectory(atPath: units, withIntermediateDirectories: true)
        try "[Service]\nExecStart=\(installed) run\n".write(toFile: units + "/openclaw-talk.service", atomically: true, encoding: .utf8)
        command.extraEnvironment = ["PATH": (installed as NSString).deletingLastPathComponent + ":/usr/bin:/bin",
                                    "XDG_DATA_HOME": command.home + "/data"]
        let out = try await command.run(["install-service"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("The unit is already installed: "), "\(out.stdout)")
        #expect(out.stdout.contains("/data/systemd/user/openclaw-talk.service (it starts \(installed))."), "\(out.stdout)")
        #expect(out.stdout.contains("systemctl --user daemon-reload && systemctl --user enable --now openclaw-talk"))
        #expect(!FileManager.default.fileExists(atPath: command.home + "/config/systemd/user/openclaw-talk.service"))
        // The installation that put the unit there put the actions in its own share folder.
        #expect(!FileManager.default.fileExists(atPath: command.home + "/data/file-manager"))
    }

    @Test func `print shows the unit for the binary given and writes nothing`() async throws {
        var command = try BuiltCommand()
        defer { command.removeHome() }
        command.extraEnvironment = ["XDG_DATA_HOME": command.home + "/data"]
        let out = try await command.run(["install-service", "--print", "--binary", "/opt/talk/bin/openclaw-talk"])
        #expect(out.status == 0)
        #expect(out.stdout.contains("ExecStart=\"/opt/talk/bin/openclaw-talk\" run"))
        #expect(out.stdout.contains("Type=notify"))
        #expect(!FileManager.default.fileExists(atPath: command.home + "/config/systemd/user"))
        #expect(!FileManager.default.fileExists(atPath: command.home + "/data/file-manager"))
    }
}
