import Foundation
import Synchronization
import TalkLogging
import Testing

@testable import AudioIO

@Suite struct WAVFileSinkTests {
    let logger = Logger(label: "test.wav-sink")

    @Test func `buffers at any rate land in one file at the sink's rate, readable after every play`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("out.wav").path
        let sink = try WAVFileSink(path: path, logger: logger)
        let speech = PCMBuffer(
            sampleRate: 22_050,
            samples: TestAudio.sineInt16(frequency: 500, rate: 22_050, seconds: 0.5)
        )
        #expect(try await sink.play(speech) == .completed)
        let first = try WAVAudio.read(path: path)
        #expect(first.sampleRate == 24_000 && first.channels == 1 && first.frameCount == 12_000)

        let clip = PCMBuffer(
            sampleRate: 44_100,
            samples: TestAudio.sineInt16(frequency: 1000, rate: 44_100, seconds: 0.25)
        )
        #expect(try await sink.play(clip) == .completed)
        await sink.close()
        let all = try WAVAudio.read(path: path).mixedToMono()
        #expect(all.samples.count == 18_000)
        #expect(abs(TestAudio.estimatedFrequency(Array(all.samples[0..<12_000]), rate: 24_000) - 500) < 2)
        #expect(abs(TestAudio.estimatedFrequency(Array(all.samples[12_000...]), rate: 24_000) - 1000) < 2)
        await #expect(throws: WAVError.unwritable(path: path, reason: "the sink is closed")) {
            _ = try await sink.play(clip)
        }
    }

    @Test func `paced playback takes 20 ms steps on the clock`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clock = VirtualClock()
        let start = clock.now
        let sink = try WAVFileSink(
            path: dir.appendingPathComponent("paced.wav").path,
            sampleRate: 16_000,
            pacing: clock.pacingClock,
            logger: logger
        )
        let outcome = try await sink.play(PCMBuffer(sampleRate: 16_000, samples: [Int16](repeating: 100, count: 8000)))
        #expect(outcome == .completed)
        #expect(clock.sleeps == (1...25).map { start + UInt64($0) * 20_000_000 })
    }

    @Test func `stop during paced playback keeps only what was heard`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("stopped.wav").path
        // A clock the test holds: the fifth 20 ms step waits until stop() has been called, so exactly five
        // chunks (100 ms) have been heard then, however late the scheduler runs either side.
        let (atFifthStep, reached) = AsyncStream<Void>.makeStream()
        let (release, released) = AsyncStream<Void>.makeStream()
        let steps = Mutex(0)
        let pacing = PacingClock(now: { 0 }, sleepUntil: { _ in
            guard steps.withLock({ $0 += 1; return $0 }) == 5 else { return }
            reached.yield()
            for await _ in release { break }
        })
        let sink = try WAVFileSink(path: path, sampleRate: 16_000, pacing: pacing, logger: logger)
        let tenSeconds = PCMBuffer(
            sampleRate: 16_000,
            samples: TestAudio.sineInt16(frequency: 300, rate: 16_000, seconds: 10)
        )
        let playing = Task { try await sink.play(tenSeconds) }
        for await _ in atFifthStep { break }
        await sink.stop()
        released.yield()
        #expect(try await playing.value == .stopped)
        let heard = try WAVAudio.read(path: path)
        #expect(heard.frameCount == 5 * 320, "\(heard.durationSeconds) s written, 0.1 s heard before stop()")
        #expect(try await sink.play(PCMBuffer(sampleRate: 16_000, samples: [1, 2, 3])) == .completed)
    }

    @Test func `an unwritable path is reported`() {
        #expect(throws: WAVError.unwritable(path: "/nonexistent/out.wav", reason: "No such file or directory")) {
            try WAVFileSink(path: "/nonexistent/out.wav", logger: logger)
        }
    }
}
