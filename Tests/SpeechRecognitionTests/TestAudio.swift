import AudioIO
import Foundation
import TalkLogging
import TalkTestSupport

@testable import SpeechRecognition

/// Audio and paths shared by the recogniser tests: Debian's pocketsphinx-testdata, the project's models/,
/// and the optional ../shared corpus.
enum TestAudio {
    static let testData = "/usr/share/pocketsphinx/test/data"

    static let projectModels = TestInputs.packageRoot + "/models"

    /// 16 kHz s16le raw audio (goforward.raw).
    static func raw(_ path: String) throws -> [Int16] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }.map { Int16(littleEndian: $0) }
    }

    static func wav(_ path: String) throws -> [Int16] {
        let audio = try WAVAudio.read(path: path)
        precondition(audio.sampleRate == 16_000, "test audio must be 16 kHz: \(path)")
        return audio.mixedToMono().samples
    }

    static let logger = Logger(label: "test.speech")

    /// Loads the models on a thread of its own: a synchronous load of about a second that, on the cooperative pool
    /// (two threads here), would hold up every other suite's waits.
    static func recognizer(_ mode: RecognitionMode, tuning: DecoderTuning? = nil) async throws
        -> PocketSphinxRecognizer
    {
        try await offPool { try PocketSphinxRecognizer(configuration: RecognizerConfiguration(mode: mode, tuning: tuning), logger: logger) }
    }

    /// Feeds the samples in 20 ms frames as a live stream would, and returns the final hypothesis.
    static func decode(_ samples: [Int16], with recognizer: PocketSphinxRecognizer) async throws -> Hypothesis {
        try await recognizer.startUtterance()
        for start in stride(from: 0, to: samples.count, by: 320) {
            _ = try await recognizer.process(Array(samples[start..<min(start + 320, samples.count)]))
        }
        return try await recognizer.endUtterance()
    }
}
