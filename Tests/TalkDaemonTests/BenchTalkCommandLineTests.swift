import Testing

@testable import TalkDaemon

/// `bench talk --stt`: whose words its file session sends, local by default so the figures are this client's.
@Suite struct BenchTalkCommandLineTests {
    let parser = CommandParser(root: OpenClawTalk.self)

    @Test func `the file session sends the local recogniser's words unless --stt says otherwise`() throws {
        let plain = try #require(try parser.command(["bench", "talk"]) as? OpenClawTalk.Bench.Talk)
        #expect(plain.stt == "local")
        let relayed = try #require(try parser.command(["bench", "talk", "--stt", "auto"]) as? OpenClawTalk.Bench.Talk)
        #expect(relayed.stt == "auto")
        #expect(throws: ValidationError("Invalid value 'cloud' for '--stt': expected local, gateway or auto")) {
            _ = try parser.command(["bench", "talk", "--stt", "cloud"])
        }
    }
}
