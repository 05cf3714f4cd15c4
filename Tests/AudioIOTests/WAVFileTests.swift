import Foundation
import Testing

@testable import AudioIO

@Suite struct WAVFileTests {
    @Test func `16-bit and float files round-trip`() throws {
        let audio = WAVAudio(sampleRate: 22_050, channels: 2, samples: (0..<200).map { Float($0 % 50 - 25) / 32 })
        for format in [WAVAudio.SampleFormat.int16, .float32] {
            let back = try WAVAudio.parse(audio.encoded(format: format))
            #expect(back.sampleRate == 22_050 && back.channels == 2 && back.samples.count == 200)
            for (a, b) in zip(audio.samples, back.samples) { #expect(abs(a - b) < 1e-4) }
        }
    }

    @Test func `malformed files give a clear error`() {
        let good = WAVAudio(sampleRate: 16_000, channels: 1, samples: [0.1, 0.2, 0.3, 0.4]).encoded()
        var lying = good
        lying[40] = 0xff  // data size says far more than follows
        var eightBit = good
        eightBit[34] = 8
        let cases: [(Data, WAVError)] = [
            (Data(), .empty(path: "<memory>")),
            (good.prefix(10), .truncatedHeader(path: "<memory>", bytes: 10)),
            (Data(repeating: 0x41, count: 64), .notRIFFWave(path: "<memory>")),
            (lying, .sizeMismatch(path: "<memory>", declared: 255, available: 8)),
            (eightBit, .unsupportedFormat(path: "<memory>", formatTag: 1, bitsPerSample: 8)),
            (WAVAudio(sampleRate: 16_000, channels: 1, samples: []).encoded(), .noSamples(path: "<memory>")),
            (good.prefix(46), .sizeMismatch(path: "<memory>", declared: 8, available: 2)),
        ]
        for (data, expected) in cases {
            #expect(throws: expected) { try WAVAudio.parse(data) }
        }
    }
}
