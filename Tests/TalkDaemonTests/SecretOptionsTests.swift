import Foundation
import Testing

@testable import TalkDaemon

/// The ways `setup` and `run` take a token or password, parsed as the CLI parses them.
@Suite struct SecretOptionsTests {
    static func parsed(_ argv: [String]) throws -> ParsedArguments {
        try CommandParser(root: OpenClawTalk.self).parse(argv).parsed
    }

    static func file(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "/oct-secret-\(UInt32.random(in: 0...UInt32.max))"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func `a token file is read without its line break, standard input with '-'`() throws {
        let path = try Self.file("file-token\n")
        defer { unlink(path) }
        let fromFile = try SecretOptions.read(Self.parsed(["setup", "--gateway", "ws://127.0.0.1:1", "--token-file", path]),
                                              includeEnvironment: true, environment: [:])
        #expect(fromFile.token == "file-token" && fromFile.password == nil)
        let fromStdin = try SecretOptions.read(Self.parsed(["run", "--gateway", "ws://127.0.0.1:1", "--password-file", "-"]),
                                               includeEnvironment: true, environment: [:], readStandardInput: { Array("pw\n".utf8) })
        #expect(fromStdin.password == "pw" && fromStdin.token == nil)
    }

    @Test func `the environment fills in only when asked, and flags win`() throws {
        let env = ["OPENCLAW_TALK_TOKEN": "env-token", "OPENCLAW_TALK_PASSWORD": "env-pw"]
        let plain = try Self.parsed(["setup", "--gateway", "ws://127.0.0.1:1"])
        #expect(try SecretOptions.read(plain, includeEnvironment: true, environment: env) == ("env-token", "env-pw"))
        #expect(try SecretOptions.read(plain, includeEnvironment: false, environment: env) == (nil, nil))
        let flagged = try Self.parsed(["setup", "--gateway", "ws://127.0.0.1:1", "--token", "flag-token"])
        #expect(try SecretOptions.read(flagged, includeEnvironment: true, environment: env).token == "flag-token")
    }

    @Test(arguments: [
        (["--token", "a", "--token-file", "/dev/null"], "not both"),
        (["--token-file", "-", "--password-file", "-"], "standard input"),
        (["--token-file", "/nonexistent/token"], "Cannot read"),
        (["--token-file", "/dev/null"], "is empty"),
    ])
    func `conflicting or unusable secrets are usage errors that never repeat a secret`(_ extra: [String], _ message: String) throws {
        #expect {
            _ = try SecretOptions.read(Self.parsed(["setup", "--gateway", "ws://127.0.0.1:1"] + extra),
                                       includeEnvironment: true, environment: [:], readStandardInput: { [] })
        } throws: { error in
            "\(error)".contains(message) && !"\(error)".contains("--token a")
        }
    }

    @Test func `setup and run both list the file options and recommend them in --help`() throws {
        for command in [OpenClawTalk.Setup.configuration, OpenClawTalk.Run.configuration] {
            let names = command.options.map(\.long)
            #expect(["token-file", "password-file", "token", "password"].allSatisfy(names.contains), "\(command.commandName)")
            #expect(command.options.first { $0.long == "token" }?.help.contains("prefer --token-file") == true)
        }
    }
}
