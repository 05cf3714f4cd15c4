import Foundation
import TalkTestSupport
import Testing

/// `openclaw-talk transcribe` run as a user runs it: the built binary, real audio, real models.
@Suite struct TranscribeCommandTests {
    private struct Utterance: Decodable {
        var start: Double
        var end: Double
        var text: String
        var audio: String?
    }

    private func temporaryWAV(_ samples: [Int16]) throws -> String { try SpeechTestAudio.writeTemporaryWAV(samples, name: "transcribe") }

    @Test func `the goforward clip is recognised exactly with its grammar`() async throws {
        let r = try await BuiltCommand.run(["transcribe", SpeechTestAudio.goForward, "--grammar", SpeechTestAudio.testData + "/goforward.gram"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasSuffix("go forward ten meters\n"), "\(r.stdout)")
    }

    @Test func `two phrases padded with silence come out as two timed utterances in JSON`() async throws {
        var clip = PaddedClip()
        clip.addSilence(ms: 1000)
        clip.addSpeech(try SpeechTestAudio.speech(SpeechTestAudio.cards(1)))
        clip.addSilence(ms: 1500)
        clip.addSpeech(try SpeechTestAudio.speech(SpeechTestAudio.cards(3)))
        clip.addSilence(ms: 1000)
        let path = try temporaryWAV(clip.withNoise(dbfs: -65))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try await BuiltCommand.run(["transcribe", path, "--json", "--grammar", SpeechTestAudio.testData + "/cards/cards.gram"])
        #expect(r.status == 0, "\(r.stderr)")
        let utterances = try JSONDecoder().decode([Utterance].self, from: Data(r.stdout.utf8))
        try #require(utterances.count == 2, "\(r.stdout)")
        #expect(utterances.map(\.text) == ["ten of clubs", "seven of clubs"])
        for (u, known) in zip(utterances, clip.speech) {
            #expect(abs(u.start * 1000 - Double(known.startMs)) <= 150)
            #expect(abs(u.end * 1000 - Double(known.endMs)) <= 150)
        }
    }

    @Test func `with a record folder each utterance's audio is saved to its own Opus file`() async throws {
        var clip = PaddedClip()
        clip.addSilence(ms: 800)
        clip.addSpeech(try SpeechTestAudio.speech(SpeechTestAudio.cards(1)))
        clip.addSilence(ms: 1500)
        clip.addSpeech(try SpeechTestAudio.speech(SpeechTestAudio.cards(5)))
        clip.addSilence(ms: 800)
        let path = try temporaryWAV(clip.withNoise(dbfs: -70))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("record-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(at: dir)
        }
        let r = try await BuiltCommand.run(["transcribe", path, "--json", "--record-dir", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        let utterances = try JSONDecoder().decode([Utterance].self, from: Data(r.stdout.utf8))
        #expect(utterances.count == 2)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".opus") }
        #expect(files.count == 2)
        for u in utterances {
            let audio = try #require(u.audio)
            let data = try #require(FileManager.default.contents(atPath: audio))
            #expect(data.starts(with: Array("OggS".utf8)) && data.count > 1000, "\(audio) is not a playable Ogg file")
        }
    }

    @Test func `pure silence gives no utterance and no error`() async throws {
        let path = try temporaryWAV([Int16](repeating: 0, count: 16_000 * 4))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let json = try await BuiltCommand.run(["transcribe", path, "--json"])
        #expect(json.status == 0)
        #expect(try JSONDecoder().decode([Utterance].self, from: Data(json.stdout.utf8)).isEmpty)
        let text = try await BuiltCommand.run(["transcribe", path])
        #expect(text.stdout.contains("No speech found"))
    }

    @Test func `clipped audio with a DC offset is still transcribed`() async throws {
        var clip = PaddedClip()
        clip.addSilence(ms: 800)
        clip.addSpeech(try SpeechTestAudio.load(SpeechTestAudio.goForward))
        clip.addSilence(ms: 800)
        let path = try temporaryWAV(SpeechTestAudio.distort(clip.withNoise(dbfs: -70), gain: 8, offset: 5000))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try await BuiltCommand.run(["transcribe", path, "--json", "--grammar", SpeechTestAudio.testData + "/goforward.gram"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try JSONDecoder().decode([Utterance].self, from: Data(r.stdout.utf8)).count == 1, "\(r.stdout)")
    }

    @Test func `bad input gives a clear error and exit status 1`() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("transcribe-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("en-us"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("empty.wav").path
        FileManager.default.createFile(atPath: empty, contents: Data())
        let badGrammar = dir.appendingPathComponent("bad.gram").path
        try "#JSGF V1.0;\ngrammar bad;\npublic <a> = go ( forward ;\n".write(toFile: badGrammar, atomically: true, encoding: .utf8)
        for part in ["mdef", "means", "variances", "transition_matrices"] {
            FileManager.default.createFile(atPath: dir.appendingPathComponent("en-us/\(part)").path, contents: Data())
        }
        let cases: [([String], String)] = [
            (["transcribe", empty], "is empty"),
            (["transcribe", dir.appendingPathComponent("absent.wav").path], "absent.wav"),
            (["transcribe", SpeechTestAudio.goForward, "--grammar", badGrammar], "bad.gram"),
            (["transcribe", SpeechTestAudio.goForward, "--model-dir", dir.path], "en-us/mdef"),
        ]
        for (args, mention) in cases {
            let r = try await BuiltCommand.run(args)
            #expect(r.status == 1, "\(args): status \(r.status)")
            #expect(r.stderr.contains("Error: ") && r.stderr.contains(mention), "\(args): \(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
    }

    @Test func `conflicting modes are a usage error`() async throws {
        let r = try await BuiltCommand.run(["transcribe", SpeechTestAudio.goForward, "--grammar", "a.gram", "--keyphrase", "hello"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("cannot be used together"))
    }
}
