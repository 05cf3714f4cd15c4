import Foundation
import Glibc
import TalkLogging
import Testing

@testable import AudioIO

/// Recordings hold what the microphone heard and the replies spoken: owner-only (0600) whatever the umask, also
/// when an older file of that name was readable by others.
@Suite struct RecordingModeTests {
    static let logger = Logger(label: "test", handler: InMemoryLogHandler())

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0o7777
    }

    @Test func `run --output, WAV files and Ogg Opus files are created 0600`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let old = umask(0o022)
        defer { umask(old) }
        let wavSink = dir.path + "/output.wav"
        FileManager.default.createFile(atPath: wavSink, contents: Data("older".utf8))
        chmod(wavSink, 0o644)
        let sink = try WAVFileSink(path: wavSink, sampleRate: 16_000, logger: Self.logger)
        _ = try await sink.play(PCMBuffer(sampleRate: 16_000, samples: [Int16](repeating: 0, count: 160)))
        await sink.close()
        let wav = dir.path + "/clip.wav"
        try WAVAudio(sampleRate: 16_000, channels: 1, samples: [0, 0.5]).write(path: wav)
        let opus = dir.path + "/clip.opus"
        let writer = try OggOpusWriter(to: .file(path: opus), sampleRate: 16_000)
        try writer.write([Int16](repeating: 0, count: 320))
        try writer.finish()
        for path in [wavSink, wav, opus] {
            #expect(Self.mode(path) == 0o600, "\(path): \(String(Self.mode(path), radix: 8))")
        }
        #expect(try OggOpusReader.read(path: opus).samples.count > 0, "still a readable stream")
    }

    @Test func `--record-dir makes a private folder and private utterance files`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let old = umask(0o022)
        defer { umask(old) }
        let folder = dir.appendingPathComponent("utterances")
        let recorder = try UtteranceRecorder(directory: folder, logger: Self.logger)
        try await recorder.begin(name: "one")
        try await recorder.append(AudioFrame(sequence: 0, captureTimeNs: 0, samples: [Int16](repeating: 0, count: AudioFrame.samplesPerFrame)))
        let url = try #require(try await recorder.finish())
        #expect(Self.mode(folder.path) == 0o700)
        #expect(Self.mode(url.path) == 0o600)
    }
}
