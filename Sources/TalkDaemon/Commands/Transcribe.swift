import AudioIO
import Foundation
import SpeechRecognition
import TalkLogging

extension OpenClawTalk {
    /// Finds the utterances in a recording and prints each with its start, end and text.
    struct Transcribe: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "transcribe",
            abstract: "Transcribe a WAV file: the utterances found in it, with start and end times.",
            discussion: "The file goes through the live capture pipeline (endpointer, then recogniser), as fast as possible unless --realtime is given.",
            options: [
                .flag("json", help: "Print a JSON array of {start, end, text, words, confidence}."),
                RecognizerOptions.grammar, RecognizerOptions.keyphrase, RecognizerOptions.modelDirectory,
                .flag("realtime", help: "Feed the file at the pace of a live microphone."),
                .option("silence-ms", value: "ms", help: "Silence that ends an utterance (default 700)."),
                .option("record-dir", value: "dir", help: "Also save each utterance's audio as an .opus file here."),
            ],
            arguments: [ArgumentSpec(name: "file", help: "The WAV file (or 16 kHz .raw) to transcribe.")]
        )

        var file: String
        var json: Bool
        var realTime: Bool
        var recognizer: RecognizerOptions
        var settings = EndpointerSettings.default
        var recordDirectory: String?

        init(_ parsed: ParsedArguments) throws {
            file = parsed.argument("file") ?? ""
            json = parsed.flag("json")
            realTime = parsed.flag("realtime")
            recognizer = try RecognizerOptions(parsed)
            if let silence = try parsed.intOption("silence-ms", range: 100...10_000) { settings.silenceMs = silence }
            recordDirectory = parsed.option("record-dir")
        }

        func run() async throws {
            let logger = Logger(label: "openclaw-talk.transcribe")
            let engine = try PocketSphinxRecognizer(configuration: recognizer.configuration, logger: logger)
            let recorder = try recordDirectory.map { try UtteranceRecorder(directory: URL(fileURLWithPath: $0), logger: logger) }
            let result = try await FileTranscriber(
                recognizer: engine, settings: settings, realTime: realTime, recorder: recorder, logger: logger
            ).transcribe(path: file)
            if json {
                print(try TranscriptJSON.encode(result.utterances))
            } else if result.utterances.isEmpty {
                print("No speech found in \(file).")
            } else {
                for u in result.utterances {
                    print(String(format: "%7.2f %7.2f  ", Double(u.startMs) / 1000, Double(u.endMs) / 1000) + u.hypothesis.text)
                    if let recording = u.recording { print("                 audio: \(recording)") }
                }
            }
        }
    }
}

/// The JSON shape of `transcribe --json`: times in seconds.
enum TranscriptJSON {
    struct Word: Encodable {
        var word: String
        var start: Double
        var end: Double
        var confidence: Double?
    }

    struct Utterance: Encodable {
        var start: Double
        var end: Double
        var text: String
        var words: [Word]?
        var confidence: Double?
        /// The utterance's audio file, with `--record-dir`.
        var audio: String?
    }

    static func encode(_ utterances: [UtteranceResult]) throws -> String {
        let items = utterances.map { u in
            Utterance(
                start: Double(u.startMs) / 1000, end: Double(u.endMs) / 1000, text: u.hypothesis.text,
                words: u.hypothesis.words.isEmpty ? nil : u.hypothesis.words.map {
                    Word(word: $0.word, start: Double(u.audioStartMs + $0.startMs) / 1000, end: Double(u.audioStartMs + $0.endMs) / 1000,
                         confidence: $0.confidence)
                },
                confidence: u.hypothesis.confidence, audio: u.recording)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(items), as: UTF8.self)
    }
}
