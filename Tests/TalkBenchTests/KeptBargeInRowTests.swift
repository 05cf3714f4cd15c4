import AudioIO
import Foundation
import SessionBridge
import TalkBench
import Testing

/// `bench talk --rejudge DIR`: a kept row's barge-in trials judged again from what the bench kept (`KeptBargeInRow`).
/// The kept folder is built here as the bench keeps one: live/bargein-<n> with the session's events (the kept
/// f27 session of `NativeRelayUserTurnTests`), relay-turns.json naming the turns' WAVs where the row first ran
/// (`/b/...`: the folder has moved since), the user's turn's audio (the corpus clip the bench plays) beside it.
@Suite struct KeptBargeInRowTests {
    static let testData = "/usr/share/pocketsphinx/test/data"

    /// A fresh kept folder, removed after `body`.
    static func keptFolder(_ body: (String) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kept-row-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/live", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await body(root)
    }

    /// Writes trial `n`: its events as stdout lines, the relay turns, the user's turn's audio (nil: none), and the
    /// record the bench keeps since `--rejudge` (nil: a folder kept before).
    static func trial(_ n: Int, in root: String, events: [JSONValue], user: [Int16]?, record: JSONValue? = nil) throws {
        let home = root + "/live/bargein-\(n)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try Data(events.map { $0.jsonText + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: home + "/stdout"))
        try Data(JSONValue.array(NativeRelayUserTurnTests.turns).jsonText.utf8).write(to: URL(fileURLWithPath: home + "/relay-turns.json"))
        if let user {
            try WAVAudio(sampleRate: AudioFrame.sampleRate, channels: 1, samples: user.map { Float($0) / 32_768 }).encoded()
                .write(to: URL(fileURLWithPath: home + "/turn-user.wav"))
        }
        if let record { try Data(record.jsonText.utf8).write(to: URL(fileURLWithPath: home + "/" + KeptBargeInRow.recordFile)) }
    }

    static let cut = NativeRelayUserTurnTests.events
    static let notCut = cut.filter { $0["event"] != "bargeIn" }
    static let noReply = notCut.filter { $0["event"] != "speakingStarted" }

    @Test func `a kept row's trials give the live row's figures, in trial order, from the turns' audio`() async throws {
        let clip = try AudioFileReader.readMono(path: Self.testData + "/goforward.raw").samples
        // The first word lost to the canceller: its first 150 ms of speech gone.
        var clipped = clip
        let onset = TalkLoopBenchmark.firstVoicedSample(clip)
        let lost = 150 * AudioFrame.sampleRate / 1000
        clipped.replaceSubrange(onset..<onset + lost, with: repeatElement(0, count: lost))
        try await Self.keptFolder { root in
            try Self.trial(0, in: root, events: Self.cut, user: clip)
            try Self.trial(1, in: root, events: Self.notCut, user: nil)
            var stopped = BargeInTrial(trial: 2, userAtSeconds: 1.7, outcome: "stopped")
            stopped.detectionMs = 431.5
            try Self.trial(2, in: root, events: Self.cut, user: clipped, record: KeptBargeInRow.record(stopped, fromHandoverMs: 502.25, grammar: nil, realtime: false))
            // Cut by the reply's own echo before the user spoke, as its record says: its turns are not the user's
            // (and its audio was not kept, so judging them would fail).
            let early = BargeInTrial(trial: 3, userAtSeconds: 2.05, outcome: "cutBeforeUser")
            try Self.trial(3, in: root, events: Self.cut, user: nil, record: KeptBargeInRow.record(early, grammar: nil, realtime: false))
            try Self.trial(10, in: root, events: Self.noReply, user: nil)

            let judged = try await KeptBargeInRow.rejudge(folder: root, grammar: nil)
            let figures = judged.figures
            #expect(figures.perTrial.map(\.trial) == [0, 1, 2, 3, 10])
            #expect(figures.perTrial.map(\.outcome) == ["stopped", "notStopped", "stopped", "cutBeforeUser", "noReply"])
            #expect((figures.trials, figures.stopped, figures.cutBeforeUser, figures.noReply) == (5, 2, 1, 1))
            #expect(figures.words.heard.first == "go forward ten meters")
            #expect(figures.words.heard.count == 2)
            #expect(figures.words.firstWordFirst == 1, "heard \(figures.words.heard)")
            #expect(figures.detectionMs == [431.5], "only the kept record knows where the user started")
            #expect(figures.detectionFromHandoverMs == [502.25])
            #expect(figures.standIn?.withWords == 2, "the transcripts sent after the cuts")
            #expect(judged.withoutRecord == 3)
            #expect(figures.json["goFirst"]?.intValue == 1)
            #expect(figures.json["wordsFrom"] == "the relay's audio, dictation")
            #expect(judged.text.contains("'go' first in 1"))
        }
    }

    /// `KeptBargeInRow.rejudge`'s failure, as the command prints it.
    static func failure(_ root: String) async -> String? {
        do {
            _ = try await KeptBargeInRow.rejudge(folder: root, grammar: nil)
            return nil
        } catch {
            return String(describing: error)
        }
    }

    @Test func `bad kept folders say what is missing and in which trial`() async throws {
        try await Self.keptFolder { root in
            #expect(await Self.failure(root)?.contains("no kept barge-in trials") == true)
            #expect(await Self.failure(root + "/nothing-here")?.contains("is not a folder") == true)

            try Self.trial(4, in: root, events: Self.cut, user: nil)
            let missingAudio = await Self.failure(root)
            #expect(missingAudio?.contains("bargein-4: turn-user.wav") == true, "\(missingAudio ?? "no failure")")

            try FileManager.default.removeItem(atPath: root + "/live/bargein-4/relay-turns.json")
            let noTurns = await Self.failure(root)
            #expect(noTurns?.hasPrefix("bargein-4: no relay-turns.json") == true, "\(noTurns ?? "no failure")")

            try Data(#"[{"mode": "transcription", "wav": "#.utf8).write(to: URL(fileURLWithPath: root + "/live/bargein-4/relay-turns.json"))
            let malformed = await Self.failure(root)
            #expect(malformed?.contains("bargein-4") == true && malformed?.contains("is not a JSON array") == true, "\(malformed ?? "no failure")")

            try Data("{\"event\":\"state\"}\nnot json\n".utf8).write(to: URL(fileURLWithPath: root + "/live/bargein-4/stdout"))
            let badEvents = await Self.failure(root)
            #expect(badEvents?.contains("bargein-4: line 2") == true, "\(badEvents ?? "no failure")")
        }
    }

    @Test func `a row kept with --live-stt local is judged again from the transcript its session sent`() async throws {
        try await Self.keptFolder { root in
            // No turn audio kept: a local row's words are the transcript sent, not what the relay received.
            let stopped = BargeInTrial(trial: 0, userAtSeconds: 1.0, outcome: "stopped")
            try Self.trial(0, in: root, events: SentUserWordsTests.events, user: nil,
                           record: KeptBargeInRow.record(stopped, grammar: nil, realtime: false, liveSTT: .local))
            let figures = try await KeptBargeInRow.rejudge(folder: root, grammar: nil).figures
            #expect(figures.json["liveSTT"] == "local")
            #expect(figures.json["heard"] == ["forward ten meters"])
            #expect((figures.words.withWords, figures.words.firstWordFirst) == (1, 0))
        }
    }
}
