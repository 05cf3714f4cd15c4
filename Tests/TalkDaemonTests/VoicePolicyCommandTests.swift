import Foundation
import TalkTestSupport
import Testing

/// A reply's voice directive chooses among the voices `say --list-voices` shows; an MBROLA voice (for which
/// libespeak-ng forks and executes `mbrola` from PATH inside our process) only when the user configured it.
/// A data folder with an MBROLA database in it and a `mbrola` on PATH that leaves a mark show whether it ran.
@Suite struct VoicePolicyCommandTests {
    static let espeakData = TestInput(name: "espeak-ng's data folder", remedy: "apt-get install espeak-ng-data") {
        ["/usr/lib/x86_64-linux-gnu/espeak-ng-data", "/usr/lib/aarch64-linux-gnu/espeak-ng-data", "/usr/share/espeak-ng-data"]
            .first { FileManager.default.fileExists(atPath: $0 + "/voices/mb") }
    }

    /// A copy of espeak-ng's data (links) with `mbrola/en1`, `mbrola/us1` and `mbrola/de1` databases, and a fake `mbrola`.
    struct Rig {
        let command: BuiltCommand
        var mark: String { command.home + "/mbrola-ran" }
        var environment: [String: String] {
            ["ESPEAK_DATA_PATH": command.home + "/data", "PATH": command.home + "/bin:" + (TestInputs.environment["PATH"] ?? "/usr/bin:/bin")]
        }

        init() throws {
            command = try BuiltCommand()
            let data = command.home + "/data/espeak-ng-data"
            let fm = FileManager.default
            try fm.createDirectory(atPath: data + "/mbrola", withIntermediateDirectories: true)
            let real = try VoicePolicyCommandTests.espeakData.path()
            for entry in try fm.contentsOfDirectory(atPath: real) where entry != "mbrola" {
                try fm.createSymbolicLink(atPath: data + "/" + entry, withDestinationPath: real + "/" + entry)
            }
            for voice in ["en1", "us1", "us2", "de1"] { fm.createFile(atPath: data + "/mbrola/" + voice, contents: Data("db".utf8)) }
            try fm.createDirectory(atPath: command.home + "/bin", withIntermediateDirectories: true)
            fm.createFile(atPath: command.home + "/bin/mbrola", contents: Data("#!/bin/sh\necho ran >> '\(command.home)/mbrola-ran'\nexit 1\n".utf8),
                          attributes: [.posixPermissions: 0o755])
        }

        func say(_ text: String, _ extra: [String] = []) async throws -> BuiltCommand.Outcome {
            try await command.run(["say", "--local", "--output", command.home + "/out.wav"] + extra + [text], environment: environment)
        }
    }

    @Test(.requires(.builtBinary, espeakData), arguments: ["mb-en1", "mb/mb-us1", "en-uk", "german-mbrola-1"])
    func `a directive never makes the daemon run mbrola`(voice: String) async throws {
        let rig = try Rig()
        defer { rig.command.removeHome() }
        let r = try await rig.say("{\"voice\":\"\(voice)\"}\nHello there, this is a test.")
        #expect(!FileManager.default.fileExists(atPath: rig.mark), "\(voice): mbrola was executed")
        #expect(r.status == 0, "\(voice): \(r.stderr)")
        #expect(r.stdout.contains("Wrote"), "\(voice): the reply was still spoken: \(r.stdout)")
    }

    @Test(.requires(.builtBinary, espeakData))
    func `a listed voice from a directive is used, and the user may configure MBROLA`() async throws {
        let rig = try Rig()
        defer { rig.command.removeHome() }
        let list = try await rig.command.run(["say", "--list-voices"], environment: rig.environment)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("en-gb") && list.stdout.contains("en-us"), "\(list.stdout)")
        #expect(!list.stdout.contains("mb-"), "MBROLA voices are not listed")
        let british = try await rig.say("{\"voice\":\"en-gb\"}\nHello there.")
        #expect(british.status == 0, "\(british.stderr)")
        // The user's own choice is theirs: libespeak-ng then runs mbrola (here the fake, which fails).
        _ = try await rig.say("Hello there.", ["--voice", "mb-en1"])
        #expect(FileManager.default.fileExists(atPath: rig.mark), "a configured MBROLA voice is not refused")
    }
}
