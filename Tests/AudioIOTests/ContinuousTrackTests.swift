import Foundation
import TalkLogging
import Testing

@testable import AudioIO

/// The devices of a file session (`run --input --output`): a file microphone that goes on with silence, and a
/// speaker that records one track in step with the clock.
@Suite struct ContinuousTrackTests {
    let logger = Logger(label: "test.track", handler: InMemoryLogHandler())

    @Test func `an endless file microphone goes on with paced silent frames after the file and never finishes`() async throws {
        let clock = VirtualClock()
        let start = clock.now
        let device = FileCaptureDevice(
            path: TestAudio.cardsWav, options: .init(pacing: .realTime, trailingSilenceMs: 100, endlessSilence: true),
            clock: clock.pacingClock, logger: logger)
        let fileFrames = FileCaptureDevice.frames(
            of: try AudioFileReader.readMono(path: TestAudio.cardsWav).samples, trailingSilenceMs: 100).count
        var frames: [AudioFrame] = []
        var finished = false
        for await event in try await device.start() {
            if case .frame(let frame) = event { frames.append(frame) }
            if case .finished = event { finished = true }
            if frames.count == fileFrames + 100 { break }
        }
        await device.stop()
        #expect(!finished)
        #expect(frames.count == fileFrames + 100)
        let after = frames[fileFrames...]
        #expect(after.allSatisfy { $0.samples.allSatisfy { $0 == 0 } })
        #expect(frames.map(\.sequence) == (0..<UInt64(frames.count)).map { frames[0].sequence + $0 })
        #expect(frames.last?.captureTimeNs == start + UInt64(frames.count) * 20_000_000, "silence paced like the file")
    }

    @Test func `the track is silence until a play, which lands where the clock is, and the play returns once written`() async throws {
        let clock = VirtualClock()
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("track.wav").path
        let track = try ContinuousTrackSink(path: path, sampleRate: 16_000, clock: clock.pacingClock, logger: logger)
        await track.start()
        while await track.writtenSeconds < 0.3 { await Task.yield() }
        let at = await track.writtenSeconds
        let tone = [Int16](repeating: 4000, count: 1600)
        #expect(try await track.play(PCMBuffer(sampleRate: 16_000, samples: tone)) == .completed)
        await track.close()
        let written = try WAVAudio.read(path: path).mixedToMono().samples
        let voiced = written.indices.filter { written[$0] != 0 }
        #expect(voiced.count == tone.count, "the whole buffer, once")
        #expect(voiced.first.map { $0 >= Int(at * 16_000) } == true, "the buffer starts after the \(at) s already written")
        #expect(voiced.last.map { $0 - voiced[0] + 1 } == tone.count, "contiguous")
        #expect(written.count >= (voiced.last ?? 0) + 1)
    }

    @Test func `a gain set while a sound plays lowers the rest of it, and stop gives the next sound its full level`() async throws {
        let clock = VirtualClock()
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("track.wav").path
        let track = try ContinuousTrackSink(path: path, sampleRate: 16_000, clock: clock.pacingClock, logger: logger)
        await track.start()
        let tone = PCMBuffer(sampleRate: 16_000, samples: [Int16](repeating: 4000, count: 8000))
        let playing = Task { try await track.play(tone) }
        while await track.writtenSeconds < 0.2 { await Task.yield() }
        await track.setGain(0.18)
        #expect(try await playing.value == .completed)
        await track.stop()
        #expect(try await track.play(tone) == .completed)
        await track.close()
        let written = try WAVAudio.read(path: path).mixedToMono().samples.filter { $0 != 0 }
        #expect(written.count == 2 * tone.samples.count)
        let first = written[..<8000], second = written[8000...]
        #expect(first.first == 4000 && first.last == 720, "the sound's rest is lowered: \(Set(first).sorted())")
        #expect(first.filter { $0 == 720 }.count > 2000, "lowered from the next chunk on, not at its end")
        #expect(second.allSatisfy { $0 == 4000 }, "the next sound is at full level")
    }
}
