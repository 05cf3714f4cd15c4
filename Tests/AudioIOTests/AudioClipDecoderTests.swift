import Foundation
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

    @Test func `unsupported and empty clips say what to ask for`() {
        let mp3 = [0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0, count: 100)
        #expect(throws: AudioClipError.unsupportedFormat("MP3")) { try AudioClipDecoder.decode(mp3) }
        #expect(throws: AudioClipError.unsupportedFormat("mp3_44100_128")) {
            try AudioClipDecoder.decode(mp3, outputFormat: "mp3_44100_128")
        }
        #expect(throws: AudioClipError.empty) { try AudioClipDecoder.decode([], mimeType: "audio/ogg") }
        #expect("\(AudioClipError.unsupportedFormat("MP3"))".contains("pcm_24000"))
    }
}
