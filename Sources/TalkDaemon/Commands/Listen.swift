import AudioIO
import Foundation
import SpeechRecognition
import TalkLogging

extension OpenClawTalk {
    /// Listens on the microphone (or a file standing in for it) and prints what is said, utterance by utterance:
    /// the capture half of Talk mode on its own, for trying recognition and device settings live.
    struct Listen: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "listen",
            abstract: "Listen on the microphone and print each utterance as it is recognised.",
            discussion: "Partial text goes to stderr while you speak (with --partials); each final line goes to stdout. "
                + "Stops after --seconds, at the end of an --input file, or on Ctrl-C.",
            options: AudioDeviceOptions.options(.microphone) + [
                .option("seconds", value: "n", help: "Stop after this many seconds."),
                .flag("partials", help: "Show partial text on stderr while speech goes on."),
                .flag("json", help: "Print one JSON object per line for each event."),
                RecognizerOptions.grammar, RecognizerOptions.keyphrase, RecognizerOptions.modelDirectory,
                .option("silence-ms", value: "ms", help: "Silence that ends an utterance (default 700)."),
                .option("record-dir", value: "dir", help: "Save each utterance's audio as an .opus file here."),
            ]
        )

        /// `--source`, or `--input` with `--fast`.
        var devices: AudioDeviceOptions
        var seconds: Double?
        var partials: Bool
        var json: Bool
        var recognizer: RecognizerOptions
        var settings = EndpointerSettings.default
        var recordDirectory: String?

        init(_ parsed: ParsedArguments) throws {
            devices = try AudioDeviceOptions(parsed, .microphone)
            seconds = try parsed.doubleOption("seconds", range: 0.1...86_400)
            partials = parsed.flag("partials")
            json = parsed.flag("json")
            recognizer = try RecognizerOptions(parsed)
            if let silence = try parsed.intOption("silence-ms", range: 100...10_000) { settings.silenceMs = silence }
            recordDirectory = parsed.option("record-dir")
        }

        func run() async throws {
            let logger = Logger(label: "openclaw-talk.listen")
            let capture = devices.capture(logger: logger)
            let engine = try PocketSphinxRecognizer(configuration: recognizer.configuration, logger: logger)
            let recorder = try recordDirectory.map { try UtteranceRecorder(directory: URL(fileURLWithPath: $0), logger: logger) }
            let pipeline = try UtterancePipeline(
                capture: capture, recognizer: engine, settings: settings, timing: devices.fast ? .streamTime : .wallClock,
                recorder: recorder, logger: logger)
            let events = try await pipeline.start()
            if devices.input == nil { FileHandle.standardError.write(Data("Listening on \(devices.source ?? "the default source"); speak.\n".utf8)) }
            let deadline = seconds.map { ContinuousClock.now + .milliseconds(Int($0 * 1000)) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for await event in events { try report(event) } }
                if let deadline {
                    group.addTask {
                        try await Task.sleep(until: deadline)
                        await pipeline.stop()
                    }
                }
                try await group.next()
                group.cancelAll()
            }
            await pipeline.stop()
        }

        private func report(_ event: UtteranceEvent) throws {
            if json {
                if let line = ListenEventJSON.line(for: event) { print(line) }
                return
            }
            switch event {
            case .partial(let text, _) where partials:
                FileHandle.standardError.write(Data("… \(text)\n".utf8))
            case .final(let u):
                guard !u.hypothesis.text.isEmpty else { return }
                print(String(format: "%7.2f %7.2f  ", Double(u.startMs) / 1000, Double(u.endMs) / 1000) + u.hypothesis.text)
                if let recording = u.recording { print("                 audio: \(recording)") }
            case .interrupted(let reason):
                FileHandle.standardError.write(Data("Microphone lost: \(reason); waiting for it to come back.\n".utf8))
            case .resumed(let device):
                FileHandle.standardError.write(Data("Listening again on \(device).\n".utf8))
            case .failed(let message):
                throw ListenError(message: message)
            default:
                break
            }
        }
    }
}

struct ListenError: Error, CustomStringConvertible {
    var message: String
    var description: String { "Recognition stopped: \(message)" }
}

/// `listen --json`: one object per event, times in seconds.
enum ListenEventJSON {
    static func line(for event: UtteranceEvent) -> String? {
        let object: [String: Any]
        switch event {
        case .speechStarted(let ms): object = ["event": "speechStarted", "at": Double(ms) / 1000]
        case .partial(let text, _): object = ["event": "partial", "text": text]
        case .speechEnded(let end, let closed): object = ["event": "speechEnded", "end": Double(end) / 1000, "closedAt": Double(closed) / 1000]
        case .final(let u):
            object = ["event": "final", "text": u.hypothesis.text, "start": Double(u.startMs) / 1000, "end": Double(u.endMs) / 1000,
                      "finalizeMs": u.finalizeMs, "audio": u.recording ?? NSNull()]
        case .interrupted(let reason): object = ["event": "interrupted", "reason": reason]
        case .resumed(let device): object = ["event": "resumed", "device": device]
        case .failed(let message): object = ["event": "failed", "message": message]
        case .finished: object = ["event": "finished"]
        }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return nil
        }
        return String(decoding: data, as: UTF8.self)
    }
}
