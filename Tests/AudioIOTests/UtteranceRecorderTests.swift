import Foundation
import TalkLogging
import Testing

@testable import AudioIO

@Suite struct UtteranceRecorderTests {
    let logger = Logger(label: "test.recorder")

    func frames(of samples: [Int16]) -> [AudioFrame] {
        FileCaptureDevice.frames(of: samples, trailingSilenceMs: 0).enumerated().map {
            AudioFrame(sequence: UInt64($0.offset), captureTimeNs: 0, samples: $0.element)
        }
    }

    @Test func `each utterance becomes its own playable file in a directory created on demand`() async throws {
        let root = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent("nested/recordings")
        let recorder = try UtteranceRecorder(
            directory: dir,
            now: { Date(timeIntervalSince1970: 1_800_000_000) },
            logger: logger
        )
        let speech = try TestAudio.goForward()
        var urls: [URL] = []
        for _ in 0..<2 {
            await #expect(try recorder.finish() == nil)
            let planned = try await recorder.begin()
            for frame in frames(of: speech) { try await recorder.append(frame) }
            let url = try #require(try await recorder.finish())
            #expect(url == planned)
            urls.append(url)
        }
        #expect(
            urls.map(\.lastPathComponent) == [
                "utterance-20270115T080000.000Z-0001.opus", "utterance-20270115T080000.000Z-0002.opus",
            ]
        )
        for url in urls {
            let back = try OggOpusReader.read(path: url.path, sampleRate: 16_000)
            #expect(abs(back.samples.count - (speech.count + 319) / 320 * 320) <= 320)
            #expect(TestAudio.bestCorrelation(original: speech, decoded: back.samples, lags: 0...5).value > 0.75)
        }
    }

    @Test func `a recorded utterance can be replayed as the microphone`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let recorder = try UtteranceRecorder(directory: dir, logger: logger)
        let speech = try TestAudio.goForward()
        try await recorder.begin(name: "replay")
        for frame in frames(of: speech) { try await recorder.append(frame) }
        let url = try #require(try await recorder.finish())
        let device = FileCaptureDevice(
            path: url.path, options: .init(pacing: .asFastAsPossible, trailingSilenceMs: 0), logger: logger)
        var replayed: [Int16] = []
        for await event in try await device.start() {
            if case .frame(let frame) = event { replayed += frame.samples }
        }
        #expect(replayed.count == (speech.count + 319) / 320 * 320)
        #expect(TestAudio.bestCorrelation(original: speech, decoded: replayed, lags: 0...5).value > 0.75)
    }

    @Test func `names are made safe, never overwrite, and cancel leaves nothing`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let recorder = try UtteranceRecorder(directory: dir, logger: logger)
        let first = try await recorder.begin(name: "../turn 1/hello?.opus")
        #expect(first.lastPathComponent == "_turn_1_hello_.opus")
        let second = try await recorder.begin(name: "../turn 1/hello?")
        #expect(second.lastPathComponent == "_turn_1_hello_-2.opus")
        try await recorder.append(
            AudioFrame(sequence: 0, captureTimeNs: 0, samples: [Int16](repeating: 500, count: 320))
        )
        await recorder.cancel()
        #expect(await recorder.isRecording == false)
        #expect(FileManager.default.fileExists(atPath: first.path))
        #expect(!FileManager.default.fileExists(atPath: second.path))
    }

    @Test func `a directory that cannot be made is reported`() throws {
        let file = try TestAudio.temporaryDirectory().appendingPathComponent("plain-file")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try Data([1]).write(to: file)
        #expect { try UtteranceRecorder(directory: file.appendingPathComponent("sub"), logger: logger) } throws: {
            error in
            guard case OpusError.recordingDirectory(let path, _) = error else { return false }
            return path.hasSuffix("plain-file/sub")
        }
    }
}
