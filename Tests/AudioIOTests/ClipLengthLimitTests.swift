import Foundation
import TalkTestSupport
import Testing

@testable import AudioIO

/// A Gateway's clip is refused past one length limit whatever its format, while it is decoded (before any
/// resampling), and nothing is sized from what its headers claim.
@Suite struct ClipLengthLimitTests {
    static let limit = AudioClipDecoder.maxSeconds

    @Test func `an Ogg Opus clip whose last page claims 2^50 samples decodes what it holds`() async throws {
        let writer = try OggOpusWriter(to: .memory, sampleRate: 24_000)
        try writer.write(TestAudio.sineInt16(frequency: 300, rate: 24_000, seconds: 4))
        try writer.finish()
        // Several pages: the first sets where the stream starts, the forged last one where it "ends".
        #expect(OggPages.parse(writer.bytes).count >= 4)
        let forged = OggPages.forgingLastGranule(writer.bytes, 1 << 50)
        #expect(forged.count < 20_000, "a clip of a few kilobytes")
        // Before the fix, opusfile's op_pcm_total (from that granule) sized an allocation and the process aborted.
        let outcome = try await computeOffPool { Result { try AudioClipDecoder.decode(forged, mimeType: "audio/ogg") } }
        if case .success(let pcm) = outcome {
            #expect(pcm.durationSeconds < 5, "\(pcm.durationSeconds) s from 4 s of audio")
        }
    }

    /// 700 s of audio in each format, a little over the limit.
    static func overLimit(_ format: String) -> (bytes: [UInt8], outputFormat: String?, mimeType: String?) {
        let seconds = limit + 100
        switch format {
        case "opus":
            // 2-byte packets of two empty 60 ms frames: about 23 KiB for 700 s.
            let packets = seconds * 1000 / 120
            return (OggPages.stream(packet: OggPages.emptyFrames120ms, packets: packets, samplesPerPacket: 5760), nil, "audio/ogg")
        case "wav":
            // 1 kHz, the lowest rate a WAV clip may have: 1.4 MB, resampled to 48 kHz it would be 67 MB.
            return (ForgedWAV.bytes(rate: 1000, data: [UInt8](repeating: 0, count: seconds * 1000 * 2)), nil, "audio/wav")
        case "pcm":
            return ([UInt8](repeating: 0, count: seconds * 8000 * 2), "pcm_8000", nil)
        default:
            // MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, 417-byte frames of silence (all-zero side information).
            var frame = [UInt8](repeating: 0, count: 417)
            frame[0...3] = [0xFF, 0xFB, 0x90, 0x00]
            let frames = seconds * 44_100 / 1152 + 1
            return (Array([[UInt8]](repeating: frame, count: frames).joined()), nil, "audio/mpeg")
        }
    }

    @Test(arguments: ["opus", "wav", "pcm", "mp3"])
    func `a clip decoding past the limit is refused before it is resampled`(format: String) async throws {
        let clip = Self.overLimit(format)
        let outcome = await Result {
            try await AudioClipDecoder.decodeOffPool(clip.bytes, outputFormat: clip.outputFormat, mimeType: clip.mimeType,
                                                     sampleRate: 48_000)
        }
        switch outcome {
        case .success(let pcm): Issue.record("\(format): \(pcm.durationSeconds) s of audio were accepted")
        case .failure(let error):
            #expect(error as? AudioClipError == .tooLong(seconds: Self.limit), "\(format): \(error)")
            #expect("\(error)".contains("\(Self.limit) s"))
        }
    }

    @Test func `a clip of exactly the limit still plays`() throws {
        let rate = 8000
        let exact = [UInt8](repeating: 0, count: Self.limit * rate * 2)
        #expect(try AudioClipDecoder.decode(exact, outputFormat: "pcm_8000").durationSeconds == Double(Self.limit))
        // (Not #expect(throws:): a failure would print the 4.8 million samples returned.)
        var refusal: AudioClipError?
        do { _ = try AudioClipDecoder.decode(exact + [0, 0], outputFormat: "pcm_8000").durationSeconds } catch { refusal = error as? AudioClipError }
        #expect(refusal == .tooLong(seconds: Self.limit))
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
