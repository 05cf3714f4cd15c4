import Foundation
import TalkTestSupport
import Testing

@testable import AudioIO

@Suite struct OggOpusTests {
    /// opus-tools, the reference encoder and decoder: files written here must satisfy them.
    static let opusinfo = TestInput.program("opusinfo", package: "opus-tools")
    static let opusdec = TestInput.program("opusdec", package: "opus-tools")
    static let opusenc = TestInput.program("opusenc", package: "opus-tools")

    static func runTool(_ tool: TestInput, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ChildProcess.output(try tool.path(), arguments, mergeStderr: true)
    }

    /// Writes speech at `rate` into a stream and checks what comes back: length and waveform.
    static func expectRoundTrip(_ speech: [Int16], rate: Int, read: () throws -> PCMBuffer) throws {
        let back = try read()
        #expect(back.sampleRate == rate)
        #expect(
            abs(back.samples.count - speech.count) <= rate / 50,
            "\(back.samples.count) samples for \(speech.count)"
        )
        let best = TestAudio.bestCorrelation(original: speech, decoded: back.samples, lags: 0...20)
        #expect(best.value > 0.75 && best.lag <= 3, "correlation \(best.value) at lag \(best.lag)")
    }

    @Test(arguments: [16_000, 22_050, 24_000])
    func `a file written here reads back with its duration and waveform`(rate: Int) throws {
        let speech = try AudioFileReader.readMono(path: TestAudio.goForwardRaw, sampleRate: rate).samples
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("goforward.opus").path
        let writer = try OggOpusWriter(to: .file(path: path), sampleRate: rate)
        for start in stride(from: 0, to: speech.count, by: 1000) {
            try writer.write(Array(speech[start..<min(start + 1000, speech.count)]))
        }
        try writer.finish()
        #expect(abs(writer.durationSeconds - Double(speech.count) / Double(rate)) < 1e-9)
        #expect(writer.bytes.isEmpty)
        let native = try OggOpusReader.read(path: path)
        #expect(native.sampleRate == 48_000)
        #expect(abs(native.durationSeconds - writer.durationSeconds) < 0.02)
        try Self.expectRoundTrip(speech, rate: rate) { try OggOpusReader.read(path: path, sampleRate: rate) }
    }

    @Test func `a stream written to memory decodes from memory`() throws {
        let speech = try TestAudio.goForward()
        let writer = try OggOpusWriter(to: .memory, sampleRate: 16_000)
        try writer.write(speech)
        try writer.finish()
        try writer.finish()
        #expect(Array(writer.bytes.prefix(4)) == Array("OggS".utf8))
        // 24 kbit/s plus Ogg overhead: the stream is a small fraction of the PCM.
        #expect(writer.bytes.count < speech.count * 2 / 8)
        try Self.expectRoundTrip(speech, rate: 16_000) { try OggOpusReader.decode(writer.bytes, sampleRate: 16_000) }
        #expect(throws: OpusError.finished(destination: "stream in memory")) { try writer.write([1, 2, 3]) }
    }

    @Test(.requires(OggOpusTests.opusinfo, OggOpusTests.opusdec)) func `opusinfo and opusdec accept a file written here`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("cards.opus").path
        let speech = try AudioFileReader.readMono(path: TestAudio.cardsWav).samples
        let writer = try OggOpusWriter(to: .file(path: path), sampleRate: 16_000)
        try writer.write(speech)
        try writer.finish()

        let info = try await Self.runTool(Self.opusinfo, [path])
        #expect(info.status == 0, "opusinfo: \(info.output)")
        #expect(info.output.contains("Original sample rate: 16000 Hz"), "opusinfo: \(info.output)")
        #expect(!info.output.contains("WARNING"), "opusinfo: \(info.output)")

        let wav = dir.appendingPathComponent("decoded.wav").path
        let dec = try await Self.runTool(Self.opusdec, ["--quiet", "--rate", "16000", path, wav])
        #expect(dec.status == 0, "opusdec: \(dec.output)")
        let decoded = try WAVAudio.read(path: wav)
        #expect(decoded.sampleRate == 16_000 && decoded.channels == 1)
        #expect(abs(decoded.frameCount - speech.count) <= 320, "opusdec gave \(decoded.frameCount) of \(speech.count)")
    }

    @Test(.requires(OggOpusTests.opusenc)) func `a clip encoded by opusenc is read`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("by-opusenc.opus").path
        let enc = try await Self.runTool(Self.opusenc, ["--quiet", TestAudio.cardsWav, path])
        #expect(enc.status == 0)
        let speech = try AudioFileReader.readMono(path: TestAudio.cardsWav).samples
        try Self.expectRoundTrip(speech, rate: 16_000) { try OggOpusReader.read(path: path, sampleRate: 16_000) }
    }

    @Test(.requires(OggOpusTests.opusenc)) func `a stereo 44.1 kHz clip from opusenc is mixed down to mono`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("stereo.wav").path
        let left = TestAudio.sine(frequency: 440, rate: 44_100, seconds: 1, amplitude: 0.5)
        let right = TestAudio.sine(frequency: 440, rate: 44_100, seconds: 1, amplitude: 0.1)
        try WAVAudio(sampleRate: 44_100, channels: 2, samples: zip(left, right).flatMap { [$0, $1] }).write(path: wav)
        let opus = dir.appendingPathComponent("stereo.opus").path
        let enc = try await Self.runTool(Self.opusenc, ["--quiet", wav, opus])
        #expect(enc.status == 0)
        let mono = try OggOpusReader.read(path: opus, sampleRate: 24_000)
        #expect(abs(mono.durationSeconds - 1) < 0.02)
        #expect(abs(TestAudio.estimatedFrequency(mono.samples, rate: 24_000) - 440) < 2)
        // The average of 0.5 and 0.1: a 0.3-amplitude sine.
        let expected = 0.3 / 2.0.squareRoot() * 32768
        #expect(abs(TestAudio.rms(mono.samples[2400..<21600]) / expected - 1) < 0.1)
    }

    @Test func `a stream with no audio finishes as a valid, empty file`() throws {
        for _ in 0..<20 {
            let writer = try OggOpusWriter(to: .memory, sampleRate: 16_000)
            try writer.finish()
            #expect(try OggOpusReader.decode(writer.bytes).samples.count <= 3)
        }
    }

    @Test func `broken streams give an error naming the source`() throws {
        let valid = try OggOpusWriter(to: .memory, sampleRate: 16_000)
        try valid.write(try TestAudio.goForward())
        try valid.finish()
        let cases: [[UInt8]] = [
            [],
            Array("RIFF....WAVEfmt ".utf8) + [UInt8](repeating: 0, count: 200),
            (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) },
            Array(valid.bytes.prefix(60)),
        ]
        for bytes in cases {
            #expect { try OggOpusReader.decode(bytes, source: "clip under test") } throws: { error in
                guard case OpusError.oggReader(let source, _, _) = error else { return false }
                return source == "clip under test"
            }
        }
        // Cut mid-stream: what is there still plays.
        let half = try OggOpusReader.decode(Array(valid.bytes.prefix(valid.bytes.count / 2)), sampleRate: 16_000)
        #expect(half.durationSeconds > 0.3 && half.durationSeconds < 2.5)
        #expect(throws: OpusError.self) { try OggOpusReader.read(path: "/nonexistent/clip.opus") }
        #expect(throws: OpusError.self) {
            try OggOpusWriter(to: .file(path: "/nonexistent/dir/clip.opus"), sampleRate: 16_000)
        }
        #expect {
            try OggOpusWriter(to: .memory, sampleRate: 16_000, settings: .init(bitrate: -5))
        } throws: { error in
            guard case OpusError.oggWriter(_, let operation, _, _) = error else { return false }
            return operation == "set the bitrate of"
        }
    }
}
