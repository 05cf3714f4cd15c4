import Foundation
import Testing
import TalkLogging
import TalkTestSupport

@testable import AudioIO

/// `OPENCLAW_TALK_AEC_RECORD` and `bench aec --replay`: a capture recorded live replays through the stages to
/// exactly what the live capture passed on, double-talk openings included, so a rare failure seen once on a
/// loudspeaker can be studied and a change checked against it.
@Suite struct EchoCaptureRecordingTests {
    static let rate = AudioFrame.sampleRate

    static func folder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("aec-record-\(UUID().uuidString)").path
    }

    /// The user over a reply whose reference is misplaced 200 ms (so `EchoAligner` moves it mid-reply) on a
    /// synthetic echo path, cleaned live with the recording on; returns what the capture passed on, and its
    /// debug log.
    static func liveSession(recordTo folder: String) async throws -> (cleaned: [AudioFrame], log: InMemoryLogHandler.Store) {
        let store = InMemoryLogHandler.Store()
        var logger = Logger(label: "test.aec.record", handler: InMemoryLogHandler(store: store))
        logger.logLevel = .debug
        let speech = try ResidualEchoTests.speech()
        let far = [Int16](repeating: 0, count: rate) + speech + speech
        let user = ResidualEchoTests.user(try ResidualEchoTests.talker(), at: 7 * rate, count: far.count, gain: 0.3)
        let near = EchoBenchmark.nearEnd(far: far, path: SyntheticEchoPath(delayMs: 80), plus: user)
        let t0: UInt64 = 5_000_000_000
        let playback = EchoReferencePlayback(SilentPlayback(), now: { t0 + 200_000_000 }, logger: logger)
        #expect(try await playback.play(PCMBuffer(sampleRate: rate, samples: far)) == .completed)
        let capture = EchoCancellingCapture(
            FrameListCapture(samples: near, firstSampleNs: t0), reference: playback.reference, recordTo: folder, logger: logger)
        var cleaned: [AudioFrame] = []
        for await event in try await capture.start() {
            if case .frame(let frame) = event { cleaned.append(frame) }
            if event == .finished { break }
        }
        await capture.stop()
        return (cleaned, store)
    }

    @Test func `a recorded capture replays to exactly what the live one passed on, double talk and moved reference included`() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (live, log) = try await Self.liveSession(recordTo: folder)
        let moved = log.events.filter { "\($0.message)" == "Echo reference moved" }
        let opened = log.events.filter { "\($0.message)" == "User heard over the echo" }
        try #require(!moved.isEmpty && !opened.isEmpty, "the session must move its reference and hear the user: moved \(moved.count), opened \(opened.count)")

        let recording = try EchoCaptureRecording(folder: folder)
        let replay = try recording.replay()
        #expect(replay.cleaned.count == recording.frames * AudioFrame.samplesPerFrame)
        // The capture's stream keeps the newest 500 frames for a reader that falls behind, as this one does
        // (the file device delivers all at once): the live frames are matched by their sequence numbers.
        let n = AudioFrame.samplesPerFrame
        let differing = live.filter { frame in
            Int(frame.sequence) >= recording.frames || Array(replay.cleaned[Int(frame.sequence) * n..<Int(frame.sequence + 1) * n]) != frame.samples
        }
        #expect(live.count >= 400 && differing.isEmpty, "\(differing.count) of \(live.count) live frames differ from the replay, from frame \(differing.first?.sequence ?? 0)")
        #expect(replay.openings.count == opened.count, "replay \(replay.openings), live \(opened.map(\.metadata))")
        #expect(recording.marks.filter { $0 == .moved }.count == moved.count)
        // Each move is recorded with its size, as the log said it.
        #expect(recording.movedMs.compactMap { $0 } == moved.compactMap { Double("\($0.metadata["audio.aec.moveMs"] ?? "")") })
        let liveDb = opened.compactMap { Int("\($0.metadata["audio.aec.linearDb"] ?? "")") }
        #expect(replay.openings.compactMap { $0.linearDb.map { Int($0.rounded()) } } == liveDb)
    }

    /// A moved reference makes the replay's stages learn the path again, as the live ones did: with a move
    /// marked every 100 ms the detector never settles, so the user over the echo no longer opens it.
    @Test func `the replay relearns where the recording says the reference moved`() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try await Self.liveSession(recordTo: folder)
        #expect(try !EchoCaptureRecording(folder: folder).replay().openings.isEmpty)
        let table = folder + "/" + EchoCaptureRecording.framesFile
        let lines = try String(contentsOfFile: table, encoding: .utf8).split(separator: "\n").enumerated().map { index, line in
            guard index > 0, index % 5 == 0 else { return String(line) }
            var fields = line.split(separator: "\t").map(String.init)
            fields[1] = "moved"
            return fields.joined(separator: "\t")
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: table, atomically: true, encoding: .utf8)
        let replay = try EchoCaptureRecording(folder: folder).replay()
        #expect(replay.openings.isEmpty, "\(replay.openings)")
    }

    /// The residual suppressor scales its expected residual by the level played around a frame: a level read
    /// back rounded (it once was, to whole RMS units) tips its judgement near the margin, and the replay parts
    /// from the live frames.
    @Test func `the level played around each frame is replayed exactly as it was measured`() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let levels = [0, 1234.4375, 87.5, 1 / 3.0, 30_000.000_000_1]
        var recorder = EchoCaptureRecorder()
        for level in levels {
            recorder.append(raw: [Int16](repeating: 1, count: AudioFrame.samplesPerFrame), far: [Int16](repeating: 2, count: AudioFrame.samplesPerFrame), playedAround: level, mark: .none)
        }
        try recorder.write(to: folder)
        #expect(try EchoCaptureRecording(folder: folder).playedAround == levels)
    }

    /// A replay judges what barge-in made of the frames after a playback gap or a reference move only if it knows
    /// where they were: each frame's row says whether a gap was announced before it and by how much the reference
    /// moved; a recording made before those columns still replays, with no gap known.
    @Test func `the gaps announced and the reference's moves are recorded per frame, and older recordings still replay`() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var recorder = EchoCaptureRecorder()
        let silence = [Int16](repeating: 0, count: AudioFrame.samplesPerFrame)
        for i in 0..<60 {
            recorder.append(raw: silence, far: silence, playedAround: 0, mark: i == 30 ? .moved : .none, gap: i == 3, movedNs: i == 30 ? -12_437_500 : nil)
        }
        try recorder.write(to: folder)
        let recording = try EchoCaptureRecording(folder: folder)
        #expect(recording.gapsRecorded)
        #expect(recording.gaps.indices.filter { recording.gaps[$0] } == [3])
        #expect(recording.movedMs[30] == -12.4375 && recording.movedMs.compactMap { $0 }.count == 1)
        #expect(recording.movedFrames == [30])
        // The settling window (800 ms, 40 frames) from each: 3..<43, renewed at the move, 30..<70 cut at the end.
        let settling = recording.settlingFrames()
        #expect(settling.indices.filter { settling[$0] } == Array(3..<60))
        #expect(recording.settlingFrames(windowMs: 200).indices.filter { recording.settlingFrames(windowMs: 200)[$0] } == Array(3..<13) + Array(30..<40))

        let table = folder + "/" + EchoCaptureRecording.framesFile
        let old = try String(contentsOfFile: table, encoding: .utf8).split(separator: "\n").map { $0.split(separator: "\t").prefix(2).joined(separator: "\t") }
        try (old.joined(separator: "\n") + "\n").write(toFile: table, atomically: true, encoding: .utf8)
        let older = try EchoCaptureRecording(folder: folder)
        #expect(!older.gapsRecorded && !older.gaps.contains(true) && older.movedFrames == [30])
        #expect(try older.replay().cleaned.count == 60 * AudioFrame.samplesPerFrame)
    }

    @Test func `the recording is private to the user`() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try await Self.liveSession(recordTo: folder)
        func mode(_ path: String) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try mode(folder) == 0o700)
        for file in ["capture.wav", "frames.tsv"] { #expect(try mode(folder + "/" + file) == 0o600, "\(file)") }
    }

    @Test func `a recording that is not one is refused with what is wrong`() throws {
        let folder = Self.folder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func refusal() -> String {
            do {
                _ = try EchoCaptureRecording(folder: folder)
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal().contains("capture.wav"), "\(refusal())")
        try WAVAudio(sampleRate: Self.rate, channels: 1, samples: [Float](repeating: 0, count: 640)).write(path: folder + "/capture.wav")
        #expect(refusal().contains("2 channels at 16000 Hz"), "\(refusal())")
        try WAVAudio(sampleRate: Self.rate, channels: 2, samples: [Float](repeating: 0, count: 1280)).write(path: folder + "/capture.wav")
        #expect(refusal().contains("no frame table"), "\(refusal())")
        try "playedAround\tmark\n0\t-\n".write(toFile: folder + "/frames.tsv", atomically: true, encoding: .utf8)
        #expect(refusal().contains("1 frames listed, the audio holds 2"), "\(refusal())")
        try "playedAround\tmark\n0\t-\nloud\tmoved\n".write(toFile: folder + "/frames.tsv", atomically: true, encoding: .utf8)
        #expect(refusal().contains("line 3"), "\(refusal())")
        try "playedAround\tmark\n0\t-\n120\tmoved\n".write(toFile: folder + "/frames.tsv", atomically: true, encoding: .utf8)
        #expect(refusal() == "accepted")
    }
}
