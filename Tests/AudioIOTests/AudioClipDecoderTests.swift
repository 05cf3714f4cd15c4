import Foundation
import TalkTestSupport
import Testing

@testable import AudioIO

@Suite struct AudioClipDecoderTests {
    static let speech = TestAudio.sineInt16(frequency: 300, rate: 24_000, seconds: 0.5)

    @Test func `raw pcm_24000 clips play at their named rate`() throws {
        let bytes = Self.speech.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
        let clip = try AudioClipDecoder.decode(bytes, outputFormat: "pcm_24000")
        #expect(clip == PCMBuffer(sampleRate: 24_000, samples: Self.speech))
        #expect(throws: AudioClipError.invalidPCMRate("pcm")) {
            try AudioClipDecoder.decode(bytes, outputFormat: "pcm")
        }
    }

    @Test func `Ogg Opus clips are recognised by MIME type, extension or their bytes`() throws {
        let writer = try OggOpusWriter(to: .memory, sampleRate: 24_000)
        try writer.write(Self.speech)
        try writer.finish()
        for (mime, ext) in [("audio/ogg", nil), (nil, ".opus"), (nil, nil)] as [(String?, String?)] {
            let clip = try AudioClipDecoder.decode(writer.bytes, mimeType: mime, fileExtension: ext)
            #expect(clip.sampleRate == 48_000 && abs(clip.durationSeconds - 0.5) < 0.02)
            #expect(abs(TestAudio.estimatedFrequency(clip.samples, rate: 48_000) - 300) < 2)
        }
    }

    @Test func `WAV clips are mixed to mono`() throws {
        let stereo = WAVAudio(sampleRate: 22_050, channels: 2, samples: [0.5, 0.1, -0.5, -0.1])
        let clip = try AudioClipDecoder.decode([UInt8](stereo.encoded()), mimeType: "audio/wav")
        #expect(clip.sampleRate == 22_050 && clip.samples.count == 2)
        // The mean of 0.5 and 0.1, give or take the 16-bit rounding of each channel.
        #expect(zip(clip.samples, [9830, -9830]).allSatisfy { abs(Int($0) - $1) <= 1 }, "\(clip.samples)")
    }

    /// A 300 Hz tone at 24 kHz, encoded by lame at 44.1 kHz the way ElevenLabs' `mp3_44100_128` comes.
    static func lameClip(seconds: Double) throws -> [UInt8] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mp3-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let tone = TestAudio.sineInt16(frequency: 300, rate: 24_000, seconds: seconds)
        try WAVAudio(sampleRate: 24_000, channels: 1, samples: tone.map { Float($0) / 32768 }).write(path: dir.path + "/in.wav")
        let (status, _) = try ChildProcess.run(try lame.path(), ["--quiet", "--resample", "44.1", "-b", "128", dir.path + "/in.wav", dir.path + "/out.mp3"],
                                               environment: [:])
        #expect(status == 0, "lame failed")
        return [UInt8](try Data(contentsOf: dir.appendingPathComponent("out.mp3")))
    }

    static let lame = TestInput.program("lame", package: "lame")

    @Test(.requires(lame))
    func `MP3 clips decode at their own rate without the encoder's padding`() async throws {
        let mp3 = try Self.lameClip(seconds: 1.5)
        for (format, mime) in [("mp3_44100_128", nil), (nil, "audio/mpeg"), (nil, nil)] as [(String?, String?)] {
            let clip = try await AudioClipDecoder.decodeOffPool(mp3, outputFormat: format, mimeType: mime)
            #expect(clip.sampleRate == 44_100)
            #expect(abs(clip.durationSeconds - 1.5) < 0.03, "\(clip.durationSeconds) s")
            #expect(abs(TestAudio.estimatedFrequency(clip.samples, rate: 44_100) - 300) < 3)
        }
        let resampled = try await AudioClipDecoder.decodeOffPool(mp3, mimeType: "audio/mpeg", sampleRate: 16_000)
        #expect(resampled.sampleRate == 16_000 && abs(resampled.durationSeconds - 1.5) < 0.03)
    }

    @Test func `broken MP3 clips fail with a clear error`() {
        var garbage = [UInt8](repeating: 0, count: 4096)
        for i in garbage.indices { garbage[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 7) }
        #expect(throws: MP3Error.noAudio) { try AudioClipDecoder.decode(garbage, mimeType: "audio/mpeg") }
        #expect(throws: MP3Error.noAudio) { try AudioClipDecoder.decode([0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0, count: 100)) }
    }

    @Test func `unsupported and empty clips say what to ask for`() {
        let flac = Array("fLaC".utf8) + [UInt8](repeating: 0, count: 100)
        #expect(throws: AudioClipError.unsupportedFormat("FLAC")) { try AudioClipDecoder.decode(flac) }
        #expect(throws: AudioClipError.unsupportedFormat("ulaw_8000")) {
            try AudioClipDecoder.decode(flac, outputFormat: "ulaw_8000")
        }
        #expect(throws: AudioClipError.empty) { try AudioClipDecoder.decode([], mimeType: "audio/ogg") }
        #expect("\(AudioClipError.unsupportedFormat("FLAC"))".contains("pcm_24000"))
    }
}
