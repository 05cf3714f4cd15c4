import AudioIO
import Foundation
import TalkLogging

/// What the pipeline found in one audio file.
package struct FileTranscription: Sendable, Equatable {
    package var path: String
    package var utterances: [UtteranceResult]
    package var summary: PipelineSummary
    /// Length of the file itself (without the silence appended to close the last utterance).
    package var audioSeconds: Double

    /// The utterances' texts joined: the file's hypothesis.
    package var text: String {
        utterances.map(\.hypothesis.text).filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// Runs a file through the same capture-side pipeline as a live microphone: a `FileCaptureDevice`
/// (paced in real time, or as fast as possible), the endpointer and the given warm recogniser.
package struct FileTranscriber: Sendable {
    package var recognizer: any SpeechRecognizer
    package var settings: EndpointerSettings
    package var realTime: Bool
    /// Writes each utterance's audio to its own file when given.
    package var recorder: UtteranceRecorder?
    package var logger: Logger
    /// Called with each event as it happens (partials for a live display); nil ignores them.
    package var onEvent: (@Sendable (UtteranceEvent) -> Void)?
    /// Runs the audio through WebRTC's audio processing first (echo cancellation with nothing playing, and
    /// whichever of high-pass filter, noise suppression and gain control these options switch on), as the
    /// live path with echo cancellation would; nil leaves the audio untouched.
    package var audioProcessing: EchoCancellerOptions?

    package init(
        recognizer: any SpeechRecognizer, settings: EndpointerSettings = .default, realTime: Bool = false,
        recorder: UtteranceRecorder? = nil, audioProcessing: EchoCancellerOptions? = nil, logger: Logger,
        onEvent: (@Sendable (UtteranceEvent) -> Void)? = nil
    ) {
        self.audioProcessing = audioProcessing
        self.recognizer = recognizer
        self.settings = settings
        self.realTime = realTime
        self.recorder = recorder
        self.logger = logger
        self.onEvent = onEvent
    }

    /// Transcribes `path`. Throws `WAVError` for a bad file and the recogniser's error if decoding fails.
    package func transcribe(path: String) async throws -> FileTranscription {
        // Enough appended silence for the endpointer to close a last utterance that runs to the file's end.
        let trailingMs = settings.silenceMs + 300
        let device = FileCaptureDevice(
            path: path,
            options: .init(pacing: realTime ? .realTime : .asFastAsPossible, trailingSilenceMs: trailingMs),
            logger: logger)
        let capture: any AudioCaptureDevice = audioProcessing.map {
            EchoCancellingCapture(device, reference: EchoReference(), options: $0, logger: logger)
        } ?? device
        let pipeline = try UtterancePipeline(
            capture: capture, recognizer: recognizer, settings: settings, timing: realTime ? .wallClock : .streamTime,
            recorder: recorder, logger: logger)
        var results: [UtteranceResult] = []
        var summary: PipelineSummary?
        for await event in try await pipeline.start() {
            onEvent?(event)
            switch event {
            case .final(let result): results.append(result)
            case .finished(let s): summary = s
            case .failed(let reason): throw TranscriptionError.decodingFailed(path: path, reason: reason)
            default: break
            }
        }
        await pipeline.stop()
        guard let summary else { throw TranscriptionError.incomplete(path: path) }
        let trailingFrames = (trailingMs + AudioFrame.durationMs - 1) / AudioFrame.durationMs
        let seconds = Double(max(0, summary.framesIn - trailingFrames) * AudioFrame.durationMs) / 1000
        return FileTranscription(path: path, utterances: results, summary: summary, audioSeconds: seconds)
    }
}

/// A file could not be transcribed to the end.
package enum TranscriptionError: Error, Equatable, CustomStringConvertible {
    case decodingFailed(path: String, reason: String)
    case incomplete(path: String)

    package var description: String {
        switch self {
        case .decodingFailed(let p, let r): return "Decoding \(p) failed: \(r)"
        case .incomplete(let p): return "Transcription of \(p) stopped before the end of the file"
        }
    }
}
