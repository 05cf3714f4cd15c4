import AudioIO
import Foundation
import TalkTestSupport

/// Speech made on the fly with espeak-ng, resampled to 16 kHz with sox (espeak-ng always writes 22 050 Hz).
enum SynthesizedSpeech {
    enum Failure: Error, CustomStringConvertible {
        case toolFailed(String, Int32)
        var description: String {
            switch self {
            case .toolFailed(let tool, let status): return "\(tool) failed with status \(status)"
            }
        }
    }

    /// 16 kHz mono samples of `text` with quiet room noise before, under and after it: digital silence never
    /// comes from a real microphone, and it throws the decoder's cepstral mean far off.
    /// `wordsPerMinute` is espeak-ng's speed (its default is 175).
    static func samples(_ text: String, voice: String = "en-us", wordsPerMinute: Int = 175, paddingMs: Int = 300) async throws -> [Int16] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("speech-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let raw = dir.appendingPathComponent("espeak.wav").path
        let resampled = dir.appendingPathComponent("16k.wav").path
        try await run("/usr/bin/espeak-ng", ["-v", voice, "-s", String(wordsPerMinute), "-w", raw, text])
        try await run("/usr/bin/sox", [raw, "-r", "16000", "-c", "1", "-b", "16", resampled])
        let speech = silence(ms: paddingMs) + (try TestAudio.wav(resampled)) + silence(ms: paddingMs)
        var noise = RoomNoise()
        return speech.map { Int16(clamping: Int($0) + noise.next()) }
    }

    /// Quiet room noise (about -60 dBFS) of the given length.
    static func silence(ms: Int) -> [Int16] {
        var noise = RoomNoise()
        return (0..<(ms * 16)).map { _ in Int16(noise.next()) }
    }

    /// Deterministic white noise of a few LSB, so tests give the same result on every run.
    struct RoomNoise {
        private var state: UInt32 = 0x1234_5678
        mutating func next() -> Int {
            state = state &* 1_664_525 &+ 1_013_904_223
            return Int(state >> 24) % 65 - 32
        }
    }

    private static func run(_ tool: String, _ arguments: [String]) async throws {
        let (status, _) = try await ChildProcess.output(tool, arguments)
        guard status == 0 else { throw Failure.toolFailed((tool as NSString).lastPathComponent, status) }
    }
}
