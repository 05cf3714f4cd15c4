import AudioIO
import Foundation
import TalkLogging

@testable import SpeechRecognition

/// Audio and paths shared by the recogniser tests: Debian's pocketsphinx-testdata, the project's models/,
/// and the optional ../shared corpus.
enum TestAudio {
    static let testData = "/usr/share/pocketsphinx/test/data"

    /// The package root, found from this file's path.
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    static let projectModels = packageRoot + "/models"

    /// ../shared/corpus/speech beside the package, or nil when absent (tests then skip with a message).
    static var corpusSpeech: String? {
        let path = URL(fileURLWithPath: packageRoot).deletingLastPathComponent()
            .appendingPathComponent("shared/corpus/speech").path
        return FileManager.default.fileExists(atPath: path + "/manifest.tsv") ? path : nil
    }

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

    static func recognizer(_ mode: RecognitionMode, tuning: DecoderTuning? = nil) throws
        -> PocketSphinxRecognizer
    {
        try PocketSphinxRecognizer(configuration: RecognizerConfiguration(mode: mode, tuning: tuning), logger: logger)
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
