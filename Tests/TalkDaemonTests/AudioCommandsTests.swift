import AudioIO
import Testing

@testable import TalkDaemon

/// The audio commands (`devices`, `record`, `play`, `bench audio`, `bench aec`) bind their options and refuse bad ones.
@Suite struct AudioCommandsTests {
    let parser = CommandParser(root: OpenClawTalk.self)

    @Test func `record binds seconds, output and source`() throws {
        let record = try #require(try parser.command(["record", "--seconds", "2.5", "--output", "x.wav", "--source", "vmic"]) as? OpenClawTalk.Record)
        #expect(record.seconds == 2.5 && record.output == "x.wav" && record.source == "vmic")
        let defaults = try #require(try parser.command(["record", "--output", "y.wav"]) as? OpenClawTalk.Record)
        #expect(defaults.seconds == 5 && defaults.source == nil)
    }

    @Test(arguments: [
        (["record", "--seconds", "2"], "Missing '--output <file.wav>'"),
        (["record", "--seconds", "soon", "--output", "x.wav"], "Invalid value 'soon' for '--seconds': expected a number in 0.02...86400.0"),
        (["play", "--sink", "vsink", "--output", "o.wav", "in.wav"], AudioDeviceOptionsTests.speakerConflict),
        (["bench", "audio", "--trials", "0"], "Invalid value '0' for '--trials': expected a whole number in 1...100"),
        (["bench", "speech", "m.tsv", "--aec-stages", "hp,ns"],
         "Invalid value 'hp,ns' for '--aec-stages': expected aec, optionally with hp, ns, agc (comma-separated)"),
        (["bench", "speech", "m.tsv", "--aec-stages", "aec,loud"],
         "Invalid value 'aec,loud' for '--aec-stages': expected aec, optionally with hp, ns, agc (comma-separated)"),
    ])
    func `bad audio options are usage errors`(argv: [String], message: String) {
        #expect(throws: ValidationError(message)) { _ = try parser.command(argv) }
    }

    @Test func `devices, play and bench audio bind their options`() throws {
        let devices = try #require(try parser.command(["devices", "--json"]) as? OpenClawTalk.Devices)
        #expect(devices.json)
        let play = try #require(try parser.command(["play", "--sink", "vsink", "clip.wav"]) as? OpenClawTalk.Play)
        #expect(play.devices.sink == "vsink" && play.devices.output == nil && play.file == "clip.wav")
        let bench = try #require(try parser.command(["bench", "audio", "--json", "--trials", "3", "--sink", "vsink"]) as? OpenClawTalk.Bench.Audio)
        #expect(bench.reporting.json && bench.trials == 3 && bench.devices.sink == "vsink" && bench.seconds == 3)
        let aec = try #require(try parser.command(["bench", "aec", "--json", "--no-live", "--sink", "vsink"]) as? OpenClawTalk.Bench.Aec)
        #expect(aec.reporting.json && !aec.live && aec.devices.sink == "vsink" && aec.devices.source == nil)
        let live = try #require(try parser.command(["bench", "aec", "--source", "vmic"]) as? OpenClawTalk.Bench.Aec)
        #expect(live.live && !live.reporting.json && live.devices.source == "vmic")
        #expect(live.options.linearStageMs == 200)
        let linear = try #require(try parser.command(["bench", "aec", "--linear-stage-ms", "0"]) as? OpenClawTalk.Bench.Aec)
        #expect(linear.options.linearStageMs == 0)
        #expect(throws: ValidationError.self) { try parser.command(["bench", "aec", "--linear-stage-ms", "900"]) }
        let speech = try #require(try parser.command(["bench", "speech", "m.tsv", "--aec-stages", "aec,hp,ns"]) as? OpenClawTalk.Bench.Speech)
        #expect(speech.audioProcessing == EchoCancellerOptions(highPassFilter: true, noiseSuppression: .moderate))
        let raw = try #require(try parser.command(["bench", "speech", "m.tsv"]) as? OpenClawTalk.Bench.Speech)
        #expect(raw.audioProcessing == nil)
    }
}
