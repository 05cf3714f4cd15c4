import Foundation
import TalkTestSupport
import Glibc
import Synchronization
import Testing
@testable import TalkService

/// `start`'s launch, with /bin/sh standing in for the daemon binary: it reports on fd 3 as the daemon does.
@Suite struct DetachTests {
    private func launch(_ script: String, timeout: Duration = .seconds(30)) throws -> (DetachedLaunch.Outcome, String, TemporaryFolder) {
        let folder = try TemporaryFolder()
        let log = folder.path + "/daemon.log"
        let outcome = try DetachedLaunch.spawn(executable: "/bin/sh", arguments: ["-c", script],
                                               environment: ["PATH": "/usr/bin:/bin"], logPath: log, timeout: timeout)
        return (outcome, log, folder)
    }

    @Test func startReturnsOnceTheChildIsReadyInItsOwnSessionLoggingToTheFile() async throws {
        let (outcome, log, folder) = try await offPool { try self.launch(#"echo "to the log"; echo "READY $$" >&3; exec sleep 30"#) }
        _ = folder
        guard case .ready(let pid) = outcome else { Issue.record("not ready: \(outcome)"); return }
        defer { kill(pid, SIGKILL); var s: Int32 = 0; waitpid(pid, &s, 0) }
        // /proc/<pid>/stat: "pid (comm) state ppid pgrp session tty_nr ..."
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        #expect(Int32(fields[3]) == pid, "own session (setsid)")
        #expect(fields[4] == "0", "no controlling terminal")
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "to the log\n")
        #expect(try FileManager.default.attributesOfItem(atPath: log)[.posixPermissions] as? Int == 0o600)
    }

    @Test func startReportsTheChildsErrorOrItsExit() async throws {
        let (failed, _, f1) = try await offPool { try self.launch(#"echo "ERROR config.json: \"x\": unknown option" >&3; exit 2"#) }
        #expect(failed == .failed(message: #"config.json: "x": unknown option"#))
        let (exited, _, f2) = try await offPool { try self.launch("exit 7") }
        #expect(exited == .exited(status: 7))
        let (silent, _, f3) = try await offPool { try self.launch("exec sleep 30", timeout: .milliseconds(300)) }
        guard case .timedOut(let pid) = silent else { Issue.record("\(silent)"); return }
        kill(pid, SIGKILL)
        var s: Int32 = 0
        waitpid(pid, &s, 0)
        _ = (f1, f2, f3)
    }

    @Test func theLogIsRotatedPastItsCap() throws {
        let folder = try TemporaryFolder()
        let log = LogFile(path: folder.path + "/daemon.log", maxBytes: 1000, keep: 2)
        // A stand-in for stderr: a descriptor of our own, so the test's real output is untouched.
        let stream = open(folder.path + "/elsewhere", O_WRONLY | O_CREAT, 0o600)
        defer { close(stream) }
        try log.attach(streams: [stream])
        let line = Array(String(repeating: "x", count: 99).utf8) + [10]
        var rotations = 0
        for _ in 0..<50 {
            _ = write(stream, line, line.count)
            if try log.rotateIfNeeded(streams: [stream]) { rotations += 1 }
        }
        #expect(rotations == 4)
        let sizes = try [log.path, log.path + ".1", log.path + ".2"].map {
            try (FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? -1
        }
        #expect(sizes.allSatisfy { $0 <= 1100 })
        #expect(!FileManager.default.fileExists(atPath: log.path + ".3"))
        #expect(try String(contentsOfFile: folder.path + "/elsewhere", encoding: .utf8).isEmpty)
    }

    @Test func sighupIsHandledNotFatal() async throws {
        let heard = Counter()
        let watch = try HangupWatch { heard.bump() }
        _ = watch
        kill(getpid(), SIGHUP)  // to the process, as a closing terminal does (raise would target a pool thread)
        for _ in 0..<500 where heard.count == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(heard.count == 1)
    }
}

/// daemon.log holds what the user said and heard: owner-only even when an older file (made under another umask,
/// or by hand) was readable by others.
@Suite struct LogFileModeTests {
    @Test func `an existing world-readable daemon.log is made 0600 by start and by a detaching daemon`() async throws {
        let folder = try TemporaryFolder()
        let log = folder.path + "/daemon.log"
        for attach in [false, true] {
            FileManager.default.createFile(atPath: log, contents: Data("old\n".utf8))
            chmod(log, 0o644)
            if attach {
                // Detaching on SIGHUP: a descriptor of our own stands in for stdout and stderr.
                let stream = open(folder.path + "/elsewhere", O_WRONLY | O_CREAT, 0o600)
                defer { close(stream) }
                try LogFile(path: log).attach(streams: [stream])
            } else {
                let outcome = try await offPool {
                    try DetachedLaunch.spawn(executable: "/bin/sh", arguments: ["-c", #"echo "READY $$" >&3"#],
                                             environment: ["PATH": "/usr/bin:/bin"], logPath: log)
                }
                guard case .ready = outcome else { Issue.record("\(outcome)"); continue }
            }
            var info = stat()
            #expect(stat(log, &info) == 0 && info.st_mode & 0o777 == 0o600, "attach \(attach): mode \(String(info.st_mode & 0o777, radix: 8))")
        }
    }

    @Test func `a link planted as daemon.log is not followed`() async throws {
        let folder = try TemporaryFolder()
        let victim = folder.path + "/victim.txt"
        FileManager.default.createFile(atPath: victim, contents: Data("precious\n".utf8))
        let log = folder.path + "/daemon.log"
        #expect(symlink(victim, log) == 0)
        _ = try? await offPool {
            try DetachedLaunch.spawn(executable: "/bin/sh", arguments: ["-c", #"echo appended; echo "READY $$" >&3"#],
                                     environment: ["PATH": "/usr/bin:/bin"], logPath: log)
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
    }
}
