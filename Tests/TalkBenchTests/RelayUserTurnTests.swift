import AudioIO
import Foundation
import SessionBridge
import TalkBench
import TalkTestSupport
import Testing

/// How `bench talk` finds, in a realtime barge-in trial, the turn the relay received the user's words in and whether
/// it was answered (`RelayUserTurn`), and counts the words like the native trials' (`LiveBargeInFigures.count`).
/// The events are a kept session's real lines (f25 binary, PulseAudio, bargein-0: the question's final, the answer,
/// the cut, the user's final, its answer); the relay turns are `relay-turns` entries of that trial's shape.
@Suite struct RealtimeRelayUserTurnTests {
    static let events = SelfEchoSessions.events(#"""
        {"event":"state","from":"idle","monotonicMs":4,"reason":"started","time":"2026-12-06T09:00:55.246Z","to":"listening"}
        {"endMs":0,"endToFinalMs":0,"engine":"gateway-realtime","event":"final","monotonicMs":5010,"startMs":0,"text":"go forward ten meters","time":"2026-12-06T09:01:00.252Z"}
        {"event":"replyFinal","monotonicMs":5011,"text":"Sure, here is what I found about that.","time":"2026-12-06T09:01:00.253Z"}
        {"event":"state","from":"listening","monotonicMs":5039,"reason":"relay audio","time":"2026-12-06T09:01:00.281Z","to":"speaking"}
        {"event":"speakingStarted","monotonicMs":5039,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T09:01:00.281Z","voice":"gateway-realtime"}
        {"detectionLatencyMs":523.5,"event":"bargeIn","monotonicMs":7545,"offsetSeconds":2.51,"partial":"","time":"2026-12-06T09:01:02.787Z"}
        {"completed":false,"event":"speakingStopped","monotonicMs":7545,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T09:01:02.787Z"}
        {"event":"state","from":"speaking","monotonicMs":7545,"reason":"barge-in","time":"2026-12-06T09:01:02.787Z","to":"listening"}
        {"endMs":0,"endToFinalMs":0,"engine":"gateway-realtime","event":"final","monotonicMs":9818,"startMs":0,"text":"go forward ten meters","time":"2026-12-06T09:01:05.060Z"}
        {"event":"replyFinal","monotonicMs":9821,"text":"Sure, here is what I found about that.","time":"2026-12-06T09:01:05.063Z"}
        {"event":"state","from":"listening","monotonicMs":9845,"reason":"relay audio","time":"2026-12-06T09:01:05.087Z","to":"speaking"}
        {"event":"speakingStarted","monotonicMs":9845,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T09:01:05.087Z","voice":"gateway-realtime"}
        {"event":"state","from":"speaking","monotonicMs":9935,"reason":"stopped","time":"2026-12-06T09:01:05.177Z","to":"idle"}
        """#)
    /// The question's turn (final at 09:01:00.252) and the user's over the answer (final at 09:01:05.060).
    static let turns = SelfEchoSessions.events(#"""
        {"sessionId":"s1","mode":"realtime","turnId":"t1","encoding":"pcm16","sampleRateHz":24000,"durationMs":4600,"text":"go forward ten meters","source":"clip:goforward","finalAtMs":1796547660252,"speechStartMs":1900,"wav":"/b/turn-t1.wav"}
        {"sessionId":"s1","mode":"realtime","turnId":"t2","encoding":"pcm16","sampleRateHz":24000,"durationMs":4780,"text":"go forward ten meters","source":"clip:goforward","finalAtMs":1796547665060,"speechStartMs":2260,"wav":"/b/turn-t2.wav"}
        """#)

    @Test func `the user's words are in the turn the relay finished after the cut, not the question's`() {
        #expect(RelayUserTurn.realtime(events: Self.events, turns: Self.turns)
            == .answered([RelayUserTurn(audio: "/b/turn-t2.wav", speechStartMs: 2260)]))
    }

    @Test func `a cut with no turn finished after it, or one nobody answered, lost the user's words`() {
        #expect(RelayUserTurn.realtime(events: Self.events, turns: Array(Self.turns.prefix(1))) == .noTurnAfter)
        // The session stopped before the answer to the user's turn began.
        let unanswered = Array(Self.events.prefix(while: { $0["monotonicMs"]?.intValue != 9845 }))
        #expect(RelayUserTurn.realtime(events: unanswered, turns: Self.turns) == .noTurnAfter)
    }

    @Test func `a reply nobody cut has no user's turn`() {
        let uncut = Self.events.filter { $0["event"] != "bargeIn" }
        #expect(RelayUserTurn.realtime(events: uncut, turns: Self.turns) == .notCut)
    }

    @Test func `words count as the user's at WER 0.25 or under; a lost turn counts as no turn after`() {
        var figures = LiveBargeInFigures()
        figures.count(words: "go forward ten meters", spoken: "go forward ten meters")
        figures.count(words: "forward ten meters", spoken: "go forward ten meters")
        figures.count(words: "ten meters", spoken: "go forward ten meters")
        figures.count(words: nil, spoken: "go forward ten meters")
        #expect(figures.words.wer == [0, 0.25, 0.5])
        #expect(figures.json["heard"] == ["go forward ten meters", "forward ten meters", "ten meters"])
        #expect((figures.words.withWords, figures.noTurnAfter) == (2, 1))
        #expect(figures.json["noTurnAfter"]?.intValue == 1)
    }
}

/// The words of a user's turn are recognised from the audio the relay received, from where its VAD heard speech start:
/// what came before in the turn (here another clip's speech) is not the user's words.
@Suite struct RelayUserTurnWordsTests {
    static let testData = "/usr/share/pocketsphinx/test/data"

    @Test func `the words are recognised from the relay's speech start on`() async throws {
        let before = try AudioFileReader.readMono(path: Self.testData + "/numbers.raw").samples
        let user = try AudioFileReader.readMono(path: Self.testData + "/goforward.raw").samples
        let relayRate = 24_000
        let turn = try PCMBuffer(sampleRate: AudioFrame.sampleRate, samples: before + user).resampled(to: relayRate)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rt-user-turn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("turn.wav").path
        try WAVAudio(sampleRate: relayRate, channels: 1, samples: turn.samples.map { Float($0) / 32_768 }).encoded()
            .write(to: URL(fileURLWithPath: path))
        let recognizer = try await offPool { try RelayUserTurn.recognizer() }
        let startMs = before.count * 1000 / AudioFrame.sampleRate
        var figures = LiveBargeInFigures()
        figures.count(words: try await RelayUserTurn(audio: path, speechStartMs: startMs).words(recognizer), spoken: "go forward ten meters")
        figures.count(words: try await RelayUserTurn(audio: path, speechStartMs: 0).words(recognizer), spoken: "go forward ten meters")
        #expect(figures.words.withWords == 1, "WER from the speech start, then from the turn's start: \(figures.words.wer)")
        #expect(figures.words.wer.first ?? 1 <= LiveBargeInFigures.werTarget)
    }

    /// A native turn is judged by the session's own recogniser: with a grammar, a first word clipped by the canceller
    /// (here the clip's first 100 ms of speech gone) is still the grammar's "go", as the session itself would send it;
    /// dictation hears "forward ten meters".
    @Test func `a native turn is recognised with the session's grammar, which restores a clipped first word`() async throws {
        var clip = try AudioFileReader.readMono(path: Self.testData + "/goforward.raw").samples
        let onset = TalkLoopBenchmark.firstVoicedSample(clip)
        let clippedMs = 100
        clip.replaceSubrange(onset..<onset + clippedMs * AudioFrame.sampleRate / 1000, with: repeatElement(0, count: clippedMs * AudioFrame.sampleRate / 1000))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("native-turn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("turn.wav").path
        try WAVAudio(sampleRate: AudioFrame.sampleRate, channels: 1, samples: clip.map { Float($0) / 32_768 }).encoded()
            .write(to: URL(fileURLWithPath: path))
        let turn = [RelayUserTurn(audio: path)]
        let withGrammar = try await RelayUserTurn.words(turn, grammar: Self.testData + "/goforward.gram")
        let byDictation = try await RelayUserTurn.words(turn, grammar: nil)
        #expect(withGrammar == "go forward ten meters")
        #expect(!HeardWords.firstWordFirst(byDictation, spoken: "go forward ten meters"), "dictation heard \(byDictation)")
    }

    /// A turn's words are what a recogniser that heard nothing before makes of it: a decoder keeps the cepstral mean
    /// of what it decoded, so with one recogniser across a row the clean question read "go forward a terrorist" after
    /// a quiet turn (the same clip 26 dB down, like an utterance of the canceller's residue), and a row's figure moved
    /// with the order its trials were judged in.
    @Test func `a turn's words do not depend on the turn judged before it`() async throws {
        let clip = try AudioFileReader.readMono(path: Self.testData + "/goforward.raw").samples
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("turn-order-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func turn(_ name: String, gain: Float) throws -> RelayUserTurn {
            let path = folder.appendingPathComponent("\(name).wav").path
            try WAVAudio(sampleRate: AudioFrame.sampleRate, channels: 1, samples: clip.map { Float($0) / 32_768 * gain }).encoded()
                .write(to: URL(fileURLWithPath: path))
            return RelayUserTurn(audio: path)
        }
        let (quiet, user) = (try turn("quiet", gain: 0.05), try turn("user", gain: 1))
        let first = try await RelayUserTurn.words([user], grammar: nil)
        let quietWords = try await RelayUserTurn.words([quiet], grammar: nil)
        #expect(first == "go forward ten meters")
        let afterQuiet = try await RelayUserTurn.words([quiet, user], grammar: nil)
        #expect(afterQuiet == [quietWords, first].filter { !$0.isEmpty }.joined(separator: " "), "the quiet turn, then the question: \(afterQuiet)")
    }
}
