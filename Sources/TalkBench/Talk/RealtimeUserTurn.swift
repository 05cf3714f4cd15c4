import AudioIO
import Foundation
import SessionBridge
import SpeechRecognition
import TalkLogging

/// What the realtime relay received of a user who cut in, found in one barge-in trial's records: the turn the relay
/// finished after the client's barge-in (its final came after the cut: the turn the user's words are in; the
/// question's turn and any turn the echo made ended before it), and whether that turn was answered (the client
/// began playing an answer after the cut). No I/O: the bench gathers the records, this finds the turn.
///
/// The words are the bench's own recognition of that turn's audio as the relay decoded it (`relay-turns` `dump`),
/// from where the relay's VAD heard speech start (`speechStartMs`, what a provider commits and transcribes): the
/// reference relay's finals are the transcript of the corpus clip its audio matches by loudness, which a clipped
/// first word still matches.
package struct RealtimeUserTurn: Sendable, Equatable {
    /// The turn's decoded audio (a WAV file).
    package var audio: String
    /// Where in it the relay's VAD heard speech start; 0 when it gives none.
    package var speechStartMs: Int

    package init(audio: String, speechStartMs: Int) { (self.audio, self.speechStartMs) = (audio, speechStartMs) }

    package enum Outcome: Sendable, Equatable {
        /// The reply was not cut by a barge-in.
        case notCut
        /// Cut, but the relay finished no turn after the cut, or nobody answered it: the user's words were lost.
        case noTurnAfter
        /// Cut, and the turn after it was answered.
        case answered(RealtimeUserTurn)
    }

    /// `events`: the client's JSON events; `turns`: the relay's `relay-turns` entries of the trial, dumped.
    package static func outcome(events: [JSONValue], turns: [JSONValue]) -> Outcome {
        func time(_ event: JSONValue) -> Date? { event["time"]?.stringValue.flatMap(TalkLoopBenchmark.eventTime) }
        guard let cut = events.first(where: { $0["event"] == "bargeIn" }).flatMap(time) else { return .notCut }
        let cutMs = Int64((cut.timeIntervalSince1970 * 1000).rounded())
        let answeredAfter = events.contains { $0["event"] == "speakingStarted" && (time($0).map { $0 > cut } ?? false) }
        let turn = turns.first { turn in
            guard turn["mode"] == "realtime", let final = turn["finalAtMs"]?.intValue else { return false }
            return final > cutMs
        }
        guard answeredAfter, let turn, let audio = turn["wav"]?.stringValue else { return .noTurnAfter }
        return .answered(RealtimeUserTurn(audio: audio, speechStartMs: Int(turn["speechStartMs"]?.intValue ?? 0)))
    }

    /// The recogniser the words are found with: dictation, the default models (a realtime session recognises
    /// nothing itself, so there is no grammar of the session's to use).
    package static func recognizer() throws -> PocketSphinxRecognizer {
        var logger = Logger(label: "openclaw-talk.bench.talk")
        logger.logLevel = .warning
        return try PocketSphinxRecognizer(configuration: RecognizerConfiguration(mode: .dictation()), logger: logger)
    }

    /// What the recogniser makes of the turn's audio from the speech start on, as one utterance.
    package func words(_ recognizer: PocketSphinxRecognizer) async throws -> String {
        let rate = AudioFrame.sampleRate
        let samples = try AudioFileReader.readMono(path: audio, sampleRate: rate).samples
        let spoken = Array(samples.dropFirst(speechStartMs * rate / 1000))
        try await recognizer.startUtterance()
        for start in stride(from: 0, to: spoken.count, by: AudioFrame.samplesPerFrame) {
            _ = try await recognizer.process(Array(spoken[start..<min(spoken.count, start + AudioFrame.samplesPerFrame)]))
        }
        return try await recognizer.endUtterance().text
    }
}
