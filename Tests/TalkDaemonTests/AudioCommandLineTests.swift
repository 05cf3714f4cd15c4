import AudioIO
import Foundation
import TalkTestSupport
import Testing

/// `devices`, `record`, `play` and `bench audio` as a user runs them: the built binary against the private
/// PulseAudio (`scripts/with-pulse.sh`: a null sink `vsink` whose monitor is the virtual microphone `vmic`).
/// One suite, run one test at a time: a test playing into `vsink` must not sound in another's recording.
@Suite(.serialized) struct AudioCommandLineTests {
    /// Debian's pocketsphinx-testdata "go forward ten meters" (16 kHz mono raw PCM, 2.9 s).
    static let clipPath = "/usr/share/pocketsphinx/test/data/goforward.raw"

    static func clip() throws -> [Int16] { try AudioFileReader.readMono(path: clipPath).samples }

    static func scratch() throws -> String {
        let dir = NSTemporaryDirectory() + "/oct-audio-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test(.requires(.pulseServer, .builtBinary)) func `devices --json lists the virtual speaker and microphone`() async throws {
        _ = try TestInput.pulseServer.path()
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let r = try await command.run(["devices", "--json"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]], "stdout: \(r.stdout)")
        let kinds = Dictionary(devices.compactMap { d in (d["name"] as? String).map { ($0, d["kind"] as? String ?? "") } }) { a, _ in a }
        #expect(kinds["vsink"] == "sink", "\(kinds)")
        #expect(kinds["vmic"] == "source", "\(kinds)")
        let vmic = devices.first { $0["name"] as? String == "vmic" }
        // PipeWire reports a remapped source at its graph's rate (PulseTestServer's PipeWire notes).
        let rate = SoundServer.current == .pipewire ? 48_000 : 16_000
        #expect(vmic?["sampleRate"] as? Int == rate && vmic?["channels"] as? Int == 1)
    }

    @Test(.requires(.pulseServer, .builtBinary)) func `record captures what is played into the speaker`() async throws {
        _ = try TestInput.pulseServer.path()
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let wav = dir + "/me.wav"
        let recording = try command.start(["record", "--seconds", "8", "--output", wav, "--source", "vmic"])
        // The clip is played once the recorder says it is capturing; 8 s leave room for a slow start.
        #expect(await recording.waitForStderr("Recording 8.0 s from vmic"), "record stderr: \(recording.stderrSoFar)")
        let play = try await command.run(["play", Self.clipPath, "--sink", "vsink"])
        #expect(play.status == 0, "play stderr: \(play.stderr)")
        let r = try await recording.finish()
        #expect(r.status == 0, "record stderr: \(r.stderr)")
        #expect(r.stdout.contains("Wrote 8.00 s to \(wav)"), "stdout: \(r.stdout)")
        let captured = try AudioFileReader.readMono(path: wav)
        #expect(abs(captured.durationSeconds - 8) < 0.05, "\(captured.durationSeconds) s")
        // The null sink's monitor sends nothing while the sink is idle, so the recording may begin a frame
        // into the clip: the search may place the clip up to 100 ms before the recording starts.
        let lead = [Int16](repeating: 0, count: 1600)
        let match = SignalMatch.best(try Self.clip(), in: lead + captured.samples)
        #expect(match.correlation > 0.8, "the clip is not in the recording: correlation \(match.correlation)")
    }

    /// The clip in each input format `play` takes: a 44.1 kHz WAV, 16 kHz raw PCM, and Ogg Opus.
    static func input(_ format: String, in dir: String) throws -> String {
        let samples = try clip()
        switch format {
        case "wav":
            let resampler = try Resampler<Int16>(from: 16_000, to: 44_100)
            let resampled = try resampler.process(samples) + resampler.flush()
            try WAVAudio(PCMBuffer(sampleRate: 44_100, samples: resampled)).write(path: dir + "/clip.wav")
            return dir + "/clip.wav"
        case "opus":
            let writer = try OggOpusWriter(to: .file(path: dir + "/clip.opus"), sampleRate: 16_000)
            try writer.write(samples)
            try writer.finish()
            return dir + "/clip.opus"
        default:
            return clipPath
        }
    }

    @Test(.requires(.builtBinary), arguments: [("wav", 0.95), ("raw", 0.99), ("opus", 0.6)])
    func `play --output writes the file's audio to a WAV`(format: String, minimumCorrelation: Double) async throws {
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = try Self.input(format, in: dir)
        let output = dir + "/out.wav"
        let r = try await command.run(["play", input, "--output", output])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let clip = try Self.clip()
        let seconds = Double(clip.count) / 16_000
        #expect(r.stdout == "Wrote \(String(format: "%.2f", seconds)) s to \(output)\n", "stdout: \(r.stdout)")
        let written = try AudioFileReader.readMono(path: output)
        #expect(abs(written.durationSeconds - seconds) < 0.05, "\(written.durationSeconds) s")
        let match = SignalMatch.best(clip, in: written.samples + [Int16](repeating: 0, count: 1600))
        #expect(match.correlation > minimumCorrelation, "correlation \(match.correlation) at \(match.offset)")
        #expect(match.offset < 800, "the audio starts \(match.offset) samples late")
    }

    @Test(.requires(.pulseServer, .builtBinary)) func `bench audio --json gives every figure the README lists`() async throws {
        _ = try TestInput.pulseServer.path()
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let r = try await command.run(["bench", "audio", "--json", "--seconds", "1", "--trials", "1",
                                       "--source", "vmic", "--sink", "vsink"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        try BenchCommandLineTests.check(BenchCommandLineTests.audioFigures, readmeFile: "bench-audio.json", output: r.stdout)
    }
}
