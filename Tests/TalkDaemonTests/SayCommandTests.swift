import Foundation
import TalkTestSupport
import Testing

@testable import TalkDaemon

/// `openclaw-talk say`: options bound and checked, and speech a recogniser understands, written through the same
/// path a reply takes.
@Suite struct SayCommandTests {
    let parser = CommandParser(root: OpenClawTalk.self)

    @Test func `say binds voice, rate, pitch and output`() throws {
        let say = try #require(try parser.command(["say", "Hello", "--voice", "en-gb", "--rate", "220", "--pitch", "30", "--output", "o.wav"]) as? OpenClawTalk.Say)
        #expect(say.text == "Hello" && say.settings.voice == "en-gb" && say.settings.rateWPM == 220 && say.settings.pitch == 30)
        #expect(say.devices.output == "o.wav" && say.devices.sink == nil && say.voiceGiven && say.rateGiven && !say.json)
        #expect(try #require(try parser.command(["say", "Hi", "--json"]) as? OpenClawTalk.Say).json)
        let plain = try #require(try parser.command(["say", "Hi", "--sink", "vsink"]) as? OpenClawTalk.Say)
        #expect(plain.settings.voice == "en-us" && plain.settings.rateWPM == 175 && !plain.rateGiven && plain.devices.sink == "vsink")
    }

    @Test(arguments: [
        (["say", "Hi", "--rate", "900"], "Invalid value '900' for '--rate': expected a whole number in 80...450"),
        (["say", "Hi", "--pitch", "-1"], "Invalid value '-1' for '--pitch': expected a whole number in 0...100"),
        (["say", "Hi", "--sink", "vsink", "--output", "o.wav"], AudioDeviceOptionsTests.speakerConflict),
    ])
    func `bad say options are usage errors`(argv: [String], message: String) {
        #expect(throws: ValidationError(message)) { _ = try parser.command(argv) }
    }

    /// Sample rate and seconds of a 16-bit mono WAV file.
    private func wavDuration(_ path: String) throws -> (rate: Int, seconds: Double) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        try #require(bytes.count >= 44 && bytes[0..<4] == [0x52, 0x49, 0x46, 0x46])
        func le32(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 3]) << 24 }
        let rate = le32(24)
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = le32(offset + 4)
            if bytes[offset..<offset + 4] == [0x64, 0x61, 0x74, 0x61] { return (rate, Double(size / 2) / Double(rate)) }
            offset += 8 + size + (size & 1)
        }
        Issue.record("no data chunk in \(path)")
        return (rate, 0)
    }

    private func temporaryFolder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("say-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test(.requires(.builtBinary))
    func `say --output writes speech that PocketSphinx recognises, with the reply's directive and markdown handled`() async throws {
        _ = try TestInput.builtBinary.path()
        let dir = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let grammar = dir + "/say.gram"
        try """
            #JSGF V1.0;
            grammar say_test;
            public <sentence> = please turn on the kitchen lights | turn off the radio | the kitchen is dark;
            """.write(toFile: grammar, atomically: true, encoding: .utf8)

        let plain = dir + "/plain.wav"
        let said = try await BuiltCommand(home: dir).run(["say", "Please turn on the kitchen lights.", "--output", plain])
        #expect(said.status == 0, "\(said.stderr)")
        #expect(said.stdout.contains("Wrote"))
        let (rate, seconds) = try wavDuration(plain)
        #expect(rate == 22_050)
        // Six words at 175 words a minute: about two seconds.
        #expect((1...4).contains(seconds), "\(seconds) s")
        let heard = try await BuiltCommand(home: dir).run(["transcribe", plain, "--grammar", grammar])
        #expect(heard.status == 0, "\(heard.stderr)")
        #expect(heard.stdout.contains("please turn on the kitchen lights"), "\(heard.stdout)")

        // A reply as the assistant writes it: a directive asking for a slower voice, emphasis, a link, an emoji.
        let reply = "{\"rate\":120,\"once\":true}\n**Please** turn on the [kitchen](https://example.com/k) lights 💡"
        let slow = dir + "/reply.wav"
        let spoken = try await BuiltCommand(home: dir).run(["say", reply, "--output", slow])
        #expect(spoken.status == 0, "\(spoken.stderr)")
        let slowSeconds = try wavDuration(slow).seconds
        #expect(slowSeconds > seconds * 1.2, "the directive's 120 WPM should be slower: \(slowSeconds) s vs \(seconds) s")
        let heardReply = try await BuiltCommand(home: dir).run(["transcribe", slow, "--grammar", grammar])
        #expect(heardReply.stdout.contains("please turn on the kitchen lights"), "\(heardReply.stdout)")
    }

    @Test(.requires(.builtBinary))
    func `say --json tells the sentences, the seconds written and when the first sentence's audio went out`() async throws {
        _ = try TestInput.builtBinary.path()
        let dir = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let wav = dir + "/two.wav"
        let run = try await BuiltCommand(home: dir).run(["say", "Turn off the radio. The kitchen is dark.", "--json", "--output", wav])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        #expect(report["sentences"] as? Int == 2)
        let seconds = try #require(report["seconds"] as? Double), written = try wavDuration(wav).seconds
        #expect(abs(seconds - written) < 0.01, "\(seconds) s said, the file holds \(written) s")
        // The voice loaded and the first sentence made before its audio went out; the second after it.
        let first = try #require(report["firstAudioMs"] as? Double), total = try #require(report["totalMs"] as? Double)
        #expect(first > 0 && first < total, "first audio \(first) ms of \(total) ms")
    }

    @Test(.requires(.builtBinary))
    func `an unknown voice fails with the reason and how to list voices`() async throws {
        _ = try TestInput.builtBinary.path()
        let dir = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try await BuiltCommand(home: dir).run(["say", "Hi.", "--voice", "xx-nosuch", "--output", dir + "/x.wav"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("Error: espeak-ng has no voice 'xx-nosuch'"), "\(run.stderr)")
        #expect(run.stderr.contains("espeak-ng --voices"))
    }

    @Test func `bench synth binds its options`() throws {
        let bench = try #require(try parser.command(["bench", "synth", "--json", "--trials", "7", "--rate", "200"]) as? OpenClawTalk.Bench.Synth)
        #expect(bench.reporting.json && bench.benchmark.trials == 7 && bench.benchmark.settings.rateWPM == 200)
        #expect(throws: ValidationError("Invalid value '0' for '--trials': expected a whole number in 1...10000")) {
            _ = try parser.command(["bench", "synth", "--trials", "0"])
        }
    }

    @Test(.requires(.builtBinary))
    func `bench synth --json reports first audio and the real-time factor`() async throws {
        _ = try TestInput.builtBinary.path()
        let dir = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try await BuiltCommand(home: dir).run(["bench", "synth", "--json", "--trials", "5"])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let first = try #require(report["firstAudioMs"] as? [String: Double])
        let voiced = try #require(report["firstVoicedAudioMs"] as? [String: Double])
        // Measured, not defaulted: a trial that never saw audio (or speech) counts 0 ms.
        let firstP50 = try #require(first["p50"]), voicedP50 = try #require(voiced["p50"])
        #expect(firstP50 > 0 && voicedP50 > 0, "first \(first), voiced \(voiced)")
        // espeak-ng begins with a little silence: the first speech comes with or after the first chunk.
        #expect(voicedP50 >= firstP50, "first \(first), voiced \(voiced)")
        // The paragraph (51 words) at 175 words a minute is about 17 s of speech.
        let paragraph = try #require(report["paragraphAudioSeconds"] as? Double)
        #expect((10...30).contains(paragraph), "paragraph \(paragraph) s")
        let rtf = try #require(report["rtf"] as? Double)
        // espeak-ng is about a thousand times faster than real time; anything near 1 would be a broken measurement.
        #expect(rtf > 0 && rtf < 0.5, "rtf \(rtf)")
        #expect(report["trials"] as? Int == 5 && report["sampleRate"] as? Int == 22_050)
    }
}
