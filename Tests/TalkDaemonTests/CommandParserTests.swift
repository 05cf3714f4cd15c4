import Testing

@testable import TalkDaemon

@Suite struct CommandParserTests {
    let parser = CommandParser(root: OpenClawTalk.self)

    @Test func `a subcommand binds its options and arguments`() throws {
        let r = try parser.parse(["play", "clip.wav", "--output=out.wav"])
        #expect(r.parsed.commandPath == ["openclaw-talk", "play"])
        #expect(r.parsed.argument("file") == "clip.wav")
        #expect(r.parsed.option("output") == "out.wav")
    }

    @Test(arguments: [
        (["frob"], "Unknown command 'frob'"),
        (["play", "--outptu", "x", "f"], "Unknown option '--outptu'. Did you mean '--output'?"),
        (["play"], "Missing expected argument '<file>'"),
        (["play", "a", "b"], "Unexpected argument 'b'"),
        (["play", "a", "--output"], "Missing value for '--output <file.wav>'"),
    ])
    func `usage errors quote the input`(argv: [String], message: String) {
        do {
            _ = try parser.parse(argv)
            Issue.record("expected a usage error for \(argv)")
        } catch let e as CommandError {
            #expect((e.underlying as? ParserError)?.message == message)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func `help anywhere asks for the help of the command it follows`() {
        #expect(throws: CleanExit.helpRequest(commandPath: ["openclaw-talk", "play"])) { try parser.parse(["play", "--help"]) }
        #expect(throws: CleanExit.helpRequest(commandPath: ["openclaw-talk", "play"])) { try parser.parse(["help", "play"]) }
        #expect(throws: CleanExit.helpRequest(commandPath: ["openclaw-talk"])) { try parser.parse(["-h"]) }
    }

    @Test func `usage errors exit 2 and name the command`() {
        let (text, code, toStdout) = CommandRunner.render(
            CommandError(commandPath: ["openclaw-talk", "play"], underlying: ParserError.unknownOption("--x", suggestion: nil)),
            root: OpenClawTalk.self)
        #expect(code == 2)
        #expect(!toStdout)
        #expect(text.hasPrefix("Error: Unknown option '--x'\nUsage: openclaw-talk play"))
        #expect(text.contains("See 'openclaw-talk play --help'"))
    }
}
