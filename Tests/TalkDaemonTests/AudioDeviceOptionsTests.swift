import Testing

@testable import TalkDaemon

/// The audio-device option group: every command that takes `--source`/`--input`/`--fast`/`--sink`/`--output`
/// binds them the same way and refuses an end given twice with the same words.
@Suite struct AudioDeviceOptionsTests {
    static let microphoneConflict =
        "'--input' and '--source' cannot be used together: the microphone is a file or a sound server's source, not both"
    static let speakerConflict =
        "'--output' and '--sink' cannot be used together: the speaker is a file or a sound server's sink, not both"

    let parser = CommandParser(root: OpenClawTalk.self)

    /// The group a parsed command holds, whichever command it is.
    static func devices(of command: any ParsableCommand) -> AudioDeviceOptions? {
        switch command {
        case let c as OpenClawTalk.Run: c.devices
        case let c as OpenClawTalk.Listen: c.devices
        case let c as OpenClawTalk.Record: c.devices
        case let c as OpenClawTalk.Say: c.devices
        case let c as OpenClawTalk.Play: c.devices
        case let c as OpenClawTalk.Bench.Audio: c.devices
        case let c as OpenClawTalk.Bench.Aec: c.devices
        case let c as OpenClawTalk.Bench.Talk: c.devices
        default: nil
        }
    }

    /// What a user sees on stderr for `argv`: the first line of the usage error.
    func errorLine(_ argv: [String]) throws -> String {
        let result = try parser.parse(argv)
        do {
            _ = try result.command.init(result.parsed)
        } catch {
            let (text, code, toStdout) = CommandRunner.render(
                CommandError(commandPath: result.parsed.commandPath, underlying: error), root: OpenClawTalk.self)
            #expect(code == ExitCode.validationFailure.rawValue && !toStdout)
            return String(text.split(separator: "\n").first ?? "")
        }
        Issue.record("\(argv) was accepted")
        return ""
    }

    @Test(arguments: [
        (["run", "--source", "vmic", "--input", "in.wav"], microphoneConflict),
        (["listen", "--input", "in.wav", "--source", "vmic"], microphoneConflict),
        (["run", "--sink", "vsink", "--output", "o.wav"], speakerConflict),
        (["say", "Hi", "--output=o.wav", "--sink=vsink"], speakerConflict),
        (["play", "--sink", "vsink", "--output", "o.wav", "in.wav"], speakerConflict),
        (["run", "--fast"], "'--fast' needs '--input FILE'"),
        (["listen", "--fast", "--source", "vmic"], "'--fast' needs '--input FILE'"),
    ])
    func `an end given as a file and a device is refused with one message`(argv: [String], message: String) throws {
        #expect(try errorLine(argv) == "Error: " + message)
    }

    @Test(arguments: [["run"], ["say", "Hi"], ["play", "in.wav"], ["bench", "audio"], ["bench", "aec"], ["bench", "talk"]])
    func `every command with a speaker takes the sink the same ways`(command: [String]) throws {
        for spelling in [["--sink", "vsink"], ["--sink=vsink"]] {
            let parsed = try parser.command(command + spelling)
            #expect(Self.devices(of: parsed)?.sink == "vsink", "\(command + spelling)")
            #expect(Self.devices(of: parsed)?.playbackName == "vsink")
        }
    }

    @Test(arguments: [["run"], ["listen"], ["record", "--output", "r.wav"], ["bench", "audio"], ["bench", "aec"], ["bench", "talk"]])
    func `every command with a microphone takes the source the same ways`(command: [String]) throws {
        for spelling in [["--source", "vmic"], ["--source=vmic"]] {
            let parsed = try parser.command(command + spelling)
            #expect(Self.devices(of: parsed)?.source == "vmic", "\(command + spelling)")
            #expect(Self.devices(of: parsed)?.captureName == "vmic")
        }
    }

    @Test func `files stand in for the devices where a command takes them`() throws {
        for command in [["run"], ["listen"]] {
            let parsed = try #require(Self.devices(of: try parser.command(command + ["--input=in.wav", "--fast"])))
            #expect(parsed == AudioDeviceOptions(input: "in.wav", fast: true), "\(command)")
            #expect(parsed.captureName == "file:in.wav")
        }
        for command in [["run"], ["say", "Hi"], ["play", "in.wav"]] {
            let parsed = try #require(Self.devices(of: try parser.command(command + ["--output", "o.wav"])))
            #expect(parsed == AudioDeviceOptions(output: "o.wav") && parsed.playbackName == "file:o.wav", "\(command)")
        }
        // The live benchmarks have no file ends: their --input is unknown.
        #expect(throws: (any Error).self) { try parser.command(["bench", "talk", "--input", "in.wav"]) }
    }

    @Test func `an option of the same name that is not the group's is the command's own`() throws {
        // bench aec's --output is where --replay writes, not a speaker: no conflict with --sink.
        let aec = try #require(
            try parser.command(["bench", "aec", "--replay", "dir", "--output", "o.wav", "--sink", "vsink"]) as? OpenClawTalk.Bench.Aec)
        #expect(aec.devices == AudioDeviceOptions(sink: "vsink") && aec.output == "o.wav")
    }
}
