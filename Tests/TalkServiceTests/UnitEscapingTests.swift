import Foundation
import Glibc
import TalkTestSupport
import Testing
@testable import TalkService

/// The unit's `ExecStart` names the binary wherever it was installed: a folder with a space must not make systemd
/// run another program, and `%` must reach it as written, not as one of systemd's specifiers (`$` is not expanded
/// in the program's path: the systemd-analyze test shows both).
@Suite struct UnitEscapingTests {
    static let analyze = TestInput.program("systemd-analyze", package: "systemd")

    @Test func `the binary's path is quoted and its specifiers escaped, and files are created owner-only`() {
        let unit = UserServiceInstaller.unit(binary: #"/opt/my apps/100%/$HOME/"x"\openclaw-talk"#)
        let exec = unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") }
        #expect(exec == #"ExecStart="/opt/my apps/100%%/$HOME/\"x\"\\openclaw-talk" run"#)
        #expect(unit.contains("\nUMask=0077\n"))
    }

    @Test(.requires(analyze))
    func `systemd reads the installed unit as running the binary it names`() async throws {
        let folder = try TemporaryFolder()
        let binary = folder.path + "/my apps/100%/$HOME/openclaw-talk"
        try FileManager.default.createDirectory(atPath: (binary as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: binary, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        _ = try UserServiceInstaller.install(binary: binary, environment: ["HOME": folder.path, "USER": "ada"])
        let unit = folder.path + "/.config/systemd/user/openclaw-talk.service"
        let analyze = try Self.analyze.path()
        let (status, output) = try await offPool {
            try ChildProcess.run("/bin/sh", ["-c", "\"$0\" verify \"$1\" 2>&1", analyze, unit], environment: ["PATH": "/usr/bin:/bin"])
        }
        #expect(!output.contains("not executable") && !output.contains("specifier"), "\(output)")
        // Any complaint about the file itself ("PATH:LINE: Unknown key ... ignoring") means systemd drops a setting.
        #expect(!output.contains(unit + ":"), "\(output)")
        #expect(status == 0, "\(output)")
    }

    /// systemd reads the restart limit from [Unit] only: in [Service] it warns, ignores it, and restarts a daemon
    /// that fails at start for ever (every 5 s) instead of giving up and saying why.
    @Test func `the restart limit is in the Unit section, where systemd reads it`() {
        var section = ""
        var found: [String: String] = [:]
        for line in UserServiceInstaller.unit(binary: "/usr/bin/openclaw-talk").split(separator: "\n") {
            if line.hasPrefix("[") { section = String(line) }
            for key in ["StartLimitIntervalSec", "StartLimitBurst"] where line.hasPrefix(key + "=") { found[key] = section }
        }
        #expect(found == ["StartLimitIntervalSec": "[Unit]", "StartLimitBurst": "[Unit]"])
    }
}
