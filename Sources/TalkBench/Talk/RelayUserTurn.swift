import AudioIO
import Foundation
import SessionBridge
import SpeechRecognition
import TalkLogging

/// What the reference Gateway's relay received of a user who cut in, found in one barge-in trial's records, and
/// whether it went on to the Gateway as a turn. No I/O: the bench gathers the records (the client's JSON events,
/// the relay's `relay-turns` entries, dumped), this finds the turns.
///
/// The words are the bench's own recognition of those turns' audio: the reference relay's finals are the
/// transcript of the corpus clip their audio matches by loudness (its stand-in for a provider), which a clipped
/// first word still matches. In native mode the relay's audio is what the client sent of the utterance (from its
/// pre-roll), so with a pcm16 16 kHz uplink (`transcriptionUplink`) it is the client's cleaned capture sample for
/// sample; in realtime mode the words count from where the relay's VAD heard speech start (`speechStartMs`,
/// what a provider commits and transcribes).
package struct RelayUserTurn: Sendable, Equatable {
    /// The turn's decoded audio (a WAV file).
    package var audio: String
    /// Where in it the relay's VAD heard speech start; 0 when it gives none (and in transcription mode).
    package var speechStartMs: Int

    package init(audio: String, speechStartMs: Int = 0) { (self.audio, self.speechStartMs) = (audio, speechStartMs) }

    /// The transcription relay's contract for native barge-in trials (`talk-uplink`): the client sends its cleaned
    /// capture as it is. Under the default, μ-law at 8 kHz, a 16 kHz acoustic model mishears even the clean question
    /// ("the r word neutered" for "go forward ten meters"), so the recognised words would judge the codec.
    package static let transcriptionUplink = "pcm16/16000"

    package enum Outcome: Sendable, Equatable {
        /// The reply was not cut by a barge-in.
        case notCut
        /// Cut, but no turn reached the Gateway after it (native: no transcript sent; realtime: the relay finished
        /// no turn after the cut, or nobody answered it): the user's words were lost.
        case noTurnAfter
        /// Cut, and the user's turn went on: the relay turns its audio is in (none: the relay finished none).
        case answered([RelayUserTurn])
    }

    private static func time(_ event: JSONValue) -> Date? { event["time"]?.stringValue.flatMap(TalkLoopBenchmark.eventTime) }
    private static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    private static func finalAtMs(_ turn: JSONValue) -> Int64? { turn["finalAtMs"]?.intValue }

    /// Realtime: the first turn the relay finished after the client's barge-in (the question's turn and any turn
    /// the echo made ended before it), if the client began playing an answer after the cut.
    package static func realtime(events: [JSONValue], turns: [JSONValue]) -> Outcome {
        guard let cut = events.first(where: { $0["event"] == "bargeIn" }).flatMap(time) else { return .notCut }
        let answeredAfter = events.contains { $0["event"] == "speakingStarted" && (time($0).map { $0 > cut } ?? false) }
        let turn = turns.first { $0["mode"] == "realtime" && (finalAtMs($0).map { $0 > milliseconds(cut) } ?? false) }
        guard answeredAfter, let turn, let audio = turn["wav"]?.stringValue else { return .noTurnAfter }
        return .answered([RelayUserTurn(audio: audio, speechStartMs: Int(turn["speechStartMs"]?.intValue ?? 0))])
    }

    /// Native: the utterance the client sent as a transcript after the barge-in went to the transcription relay
    /// as the turns it finished after the cut, up to that transcript (the client joins their finals); when the
    /// relay was slower than the client's wait (it sent its own words), the first turn finished after the cut.
    package static func native(events: [JSONValue], turns: [JSONValue]) -> Outcome {
        guard let cut = events.first(where: { $0["event"] == "bargeIn" }).flatMap(time) else { return .notCut }
        guard let sent = events.first(where: { $0["event"] == "transcriptSent" && (time($0).map { $0 > cut } ?? false) }).flatMap(time) else {
            return .noTurnAfter
        }
        let after = turns.filter { $0["mode"] == "transcription" && (finalAtMs($0).map { $0 > milliseconds(cut) } ?? false) }
        let before = after.filter { finalAtMs($0).map { $0 <= milliseconds(sent) } ?? false }
        let chosen = before.isEmpty ? Array(after.prefix(1)) : before
        return .answered(chosen.compactMap { $0["wav"]?.stringValue }.map { RelayUserTurn(audio: $0) })
    }

    /// The recogniser the words are found with: the session's (dictation, or `grammar`), the default models.
    package static func recognizer(grammar: String? = nil) throws -> PocketSphinxRecognizer {
        var logger = Logger(label: "openclaw-talk.bench.talk")
        logger.logLevel = .warning
        let mode: RecognitionMode = grammar.map { .grammar(path: $0) } ?? .dictation()
        return try PocketSphinxRecognizer(configuration: RecognizerConfiguration(mode: mode), logger: logger)
    }

    /// What a recogniser of its own makes of the turn (`recognizer(grammar:)`, built on a thread of its own: loading
    /// the dictation model is about 0.4 s of C work). Never one that decoded anything before: a decoder keeps the
    /// cepstral mean it learnt from the audio it heard (`PocketSphinxRecognizer`), so a turn judged after another
    /// turn's audio read differently, and a row's figure depended on the order its trials were judged in.
    package func words(grammar: String?) async throws -> String {
        let recognizer = try await withCheckedThrowingContinuation { (done: CheckedContinuation<PocketSphinxRecognizer, any Error>) in
            let thread = Thread { done.resume(with: Result { try Self.recognizer(grammar: grammar) }) }
            thread.name = "bench-recognizer"
            thread.start()
        }
        return try await words(recognizer)
    }

    /// What `recognizer` makes of the turn's audio from the speech start on, as one utterance.
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

    /// The words of `turns` in order, each recognised as an utterance of its own by a recogniser of its own (as a
    /// provider's finals are, whatever was heard before them).
    package static func words(_ turns: [RelayUserTurn], grammar: String?) async throws -> String {
        var words: [String] = []
        for turn in turns { words.append(try await turn.words(grammar: grammar)) }
        return words.filter { !$0.isEmpty }.joined(separator: " ")
    }
}
