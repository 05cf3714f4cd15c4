import Foundation
import TalkLogging
import Testing

@testable import AudioIO

/// Hand-built WAV files, each broken in one way, written to disk and read through the path APIs.
@Suite struct MalformedWAVTests {
    /// A RIFF/WAVE file from raw chunks: `[(id, body)]`, with an optional lying RIFF size.
    static func riff(_ chunks: [(String, [UInt8])]) -> [UInt8] {
        var body = Array("WAVE".utf8)
        for (id, data) in chunks {
            body += Array(id.utf8) + le32(data.count) + data
            if data.count % 2 == 1 { body.append(0) }
        }
        return Array("RIFF".utf8) + le32(body.count) + body
    }

    static func fmt(tag: Int, channels: Int = 1, rate: Int = 16_000, bits: Int, blockAlign: Int? = nil) -> [UInt8] {
        let align = blockAlign ?? channels * max(bits, 8) / 8
        return le16(tag) + le16(channels) + le32(rate) + le32(rate * align) + le16(align) + le16(bits)
    }

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xff), UInt8((v >> 8) & 0xff)] }
    static func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> ($0 * 8)) & 0xff) } }

    static let pcm = [UInt8](repeating: 0x10, count: 64)
    static let good = riff([("fmt ", fmt(tag: 1, bits: 16)), ("data", pcm)])

    static let cases: [(name: String, bytes: [UInt8], expected: @Sendable (String) -> WAVError)] = [
        ("empty.wav", [], { .empty(path: $0) }),
        ("truncated-header.wav", Array(good.prefix(10)), { .truncatedHeader(path: $0, bytes: 10) }),
        ("header-cut-in-fmt.wav", Array(good.prefix(30)), { .truncatedHeader(path: $0, bytes: 30) }),
        ("not-riff.wav", Array("OggS".utf8) + [UInt8](repeating: 0, count: 60), { .notRIFFWave(path: $0) }),
        (
            "riff-but-avi.wav", Array("RIFF".utf8) + le32(60) + Array("AVI ".utf8) + [UInt8](repeating: 0, count: 56),
            { .notRIFFWave(path: $0) }
        ),
        (
            "8-bit.wav", riff([("fmt ", fmt(tag: 1, bits: 8)), ("data", pcm)]),
            { .unsupportedFormat(path: $0, formatTag: 1, bitsPerSample: 8) }
        ),
        (
            "24-bit.wav", riff([("fmt ", fmt(tag: 1, bits: 24)), ("data", pcm)]),
            { .unsupportedFormat(path: $0, formatTag: 1, bitsPerSample: 24) }
        ),
        (
            "ima-adpcm.wav",
            riff([("fmt ", fmt(tag: 0x11, bits: 4, blockAlign: 256) + le16(2) + le16(505)), ("data", pcm)]),
            { .unsupportedFormat(path: $0, formatTag: 0x11, bitsPerSample: 4) }
        ),
        (
            "ms-adpcm.wav", riff([("fmt ", fmt(tag: 2, bits: 4, blockAlign: 256)), ("data", pcm)]),
            { .unsupportedFormat(path: $0, formatTag: 2, bitsPerSample: 4) }
        ),
        (
            "zero-channels.wav", riff([("fmt ", fmt(tag: 1, channels: 0, bits: 16, blockAlign: 2)), ("data", pcm)]),
            { .invalidFormat(path: $0, reason: "0 channels") }
        ),
        (
            "no-fmt.wav", riff([("LIST", [UInt8](repeating: 0x20, count: 26)), ("data", pcm)]),
            { .missingChunk(path: $0, chunk: "fmt ") }
        ),
        (
            "no-data.wav", riff([("fmt ", fmt(tag: 1, bits: 16)), ("LIST", [UInt8](repeating: 0x20, count: 40))]),
            { .missingChunk(path: $0, chunk: "data") }
        ),
        (
            "size-lies.wav", Array(good.prefix(44)) + [1, 2, 3, 4],
            { .sizeMismatch(path: $0, declared: 64, available: 4) }
        ),
        ("no-samples.wav", riff([("fmt ", fmt(tag: 1, bits: 16)), ("data", [])]), { .noSamples(path: $0) }),
    ]

    @Test(arguments: cases.indices)
    func `a malformed file gives its error through the path API and the file microphone`(index: Int) async throws {
        let (name, bytes, expected) = Self.cases[index]
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        #expect(throws: expected(path)) { try WAVAudio.read(path: path) }
        let device = FileCaptureDevice(path: path, logger: Logger(label: "test.malformed"))
        await #expect(throws: expected(path)) { _ = try await device.start() }
        #expect("\(expected(path))".contains(path))
    }

    @Test func `the well-formed control file reads`() throws {
        let audio = try WAVAudio.parse(Data(Self.good))
        #expect(audio.frameCount == 32 && audio.sampleRate == 16_000)
    }

    @Test func `an empty raw file is reported, an odd byte is dropped`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("empty.raw").path
        try Data().write(to: URL(fileURLWithPath: empty))
        #expect(throws: WAVError.empty(path: empty)) { try AudioFileReader.readMono(path: empty) }
        let odd = dir.appendingPathComponent("odd.raw").path
        try Data([1, 0, 2, 0, 3]).write(to: URL(fileURLWithPath: odd))
        #expect(try AudioFileReader.readMono(path: odd).samples == [1, 2])
    }
}
