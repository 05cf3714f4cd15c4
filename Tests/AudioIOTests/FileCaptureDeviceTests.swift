import Foundation
import TalkLogging
import Synchronization
import Testing

@testable import AudioIO

@Suite struct FileCaptureDeviceTests {
    let logger = Logger(label: "test.file-capture")

    /// Collects every event until `.finished` (or the stream ends).
    func collect(_ device: FileCaptureDevice) async throws -> (frames: [AudioFrame], finished: Bool) {
        var frames: [AudioFrame] = []
        for await event in try await device.start() {
            switch event {
            case .frame(let frame): frames.append(frame)
            case .finished: return (frames, true)
            case .interrupted, .resumed: break
            }
        }
        return (frames, false)
    }

    @Test func `goforward.raw arrives as whole 20 ms frames, numbered in order, then silence`() async throws {
        let samples = try TestAudio.goForward()
        let device = FileCaptureDevice(
            path: TestAudio.goForwardRaw,
            options: .init(pacing: .asFastAsPossible),
            logger: logger
        )
        let (frames, finished) = try await collect(device)
        #expect(finished)
        let speechFrames = (samples.count + 319) / 320
        #expect(frames.count == speechFrames + 75)
        #expect(frames.map(\.sequence) == (0..<UInt64(frames.count)).map { $0 })
        #expect(frames.allSatisfy { $0.samples.count == AudioFrame.samplesPerFrame })
        #expect(Array(frames.prefix(speechFrames).flatMap(\.samples).prefix(samples.count)) == samples)
        #expect(frames.suffix(75).allSatisfy { $0.samples.allSatisfy { $0 == 0 } })
    }

    @Test(arguments: [0, 10, 20, 1500, 2010])
    func `trailing silence is rounded up to whole frames`(ms: Int) async throws {
        let device = FileCaptureDevice(
            path: TestAudio.cardsWav,
            options: .init(pacing: .asFastAsPossible, trailingSilenceMs: ms),
            logger: logger
        )
        let (frames, _) = try await collect(device)
        let duration = try WAVAudio.read(path: TestAudio.cardsWav).frameCount
        #expect(frames.count == (duration + 319) / 320 + (ms + 19) / 20)
    }

    @Test func `real-time pacing hands frame n over (n + 1) × 20 ms after start`() async throws {
        let clock = VirtualClock()
        let start = clock.now
        let device = FileCaptureDevice(
            path: TestAudio.cardsWav,
            options: .init(pacing: .realTime, trailingSilenceMs: 100),
            clock: clock.pacingClock,
            logger: logger
        )
        let (frames, finished) = try await collect(device)
        #expect(finished)
        let expected = (0..<UInt64(frames.count)).map { start + ($0 + 1) * 20_000_000 }
        #expect(clock.sleeps == expected)
        #expect(frames.map(\.captureTimeNs) == expected)
    }

    @Test func `real-time pacing on the real clock takes about as long as the audio`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("short.wav").path
        try WAVAudio(
            sampleRate: 16_000,
            channels: 1,
            samples: TestAudio.sine(frequency: 200, rate: 16_000, seconds: 0.3)
        )
        .write(path: path)
        let device = FileCaptureDevice(path: path, options: .init(trailingSilenceMs: 100), logger: logger)
        let began = monotonicNanoseconds()
        let (frames, _) = try await collect(device)
        let seconds = Double(monotonicNanoseconds() - began) / 1e9
        #expect(frames.count == 20)
        // Never faster than real time (exact deadlines are checked on a virtual clock above). The upper bound
        // only catches a hang: CPU-bound tests running alongside can starve the sleeping task for seconds.
        #expect(seconds >= 0.38 && seconds < 60, "20 frames took \(seconds) s")
    }

    @Test func `fast mode does not wait for the clock`() async throws {
        let clock = VirtualClock()
        let device = FileCaptureDevice(
            path: TestAudio.goForwardRaw,
            options: .init(pacing: .asFastAsPossible),
            clock: clock.pacingClock,
            logger: logger
        )
        let (frames, finished) = try await collect(device)
        #expect(finished && frames.count > 100)
        #expect(clock.sleeps.isEmpty)
    }

    @Test func `stereo 44.1 kHz is mixed down and resampled to 16 kHz`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let left = TestAudio.sine(frequency: 300, rate: 44_100, seconds: 1, amplitude: 0.6)
        let right = TestAudio.sine(frequency: 300, rate: 44_100, seconds: 1, amplitude: 0.2)
        let path = dir.appendingPathComponent("stereo.wav").path
        try WAVAudio(sampleRate: 44_100, channels: 2, samples: zip(left, right).flatMap { [$0, $1] })
            .write(path: path, format: .float32)
        let device = FileCaptureDevice(
            path: path,
            options: .init(pacing: .asFastAsPossible, trailingSilenceMs: 0),
            logger: logger
        )
        let (frames, _) = try await collect(device)
        #expect(frames.count == 50)
        let mono = frames.flatMap(\.samples)
        #expect(abs(TestAudio.estimatedFrequency(mono, rate: 16_000) - 300) < 1)
        // The mix is a 0.4-amplitude sine: RMS 0.4 / √2 of full scale.
        let expectedRMS = 0.4 / 2.0.squareRoot() * 32768
        #expect(abs(TestAudio.rms(mono[1600..<14400]) / expectedRMS - 1) < 0.02)
    }

    @Test func `stop ends the stream early and a restart keeps counting`() async throws {
        // The clock lets ten frames through, then holds the producer until it is cancelled, so how far
        // it gets before stop() lands never depends on how busy the machine is.
        let gate = Mutex((sleeps: 0, open: false))
        let virtual = VirtualClock()
        let clock = PacingClock(now: virtual.pacingClock.now) { deadline in
            let hold = gate.withLock { g in g.sleeps += 1; return !g.open && g.sleeps > 10 }
            if hold { try await Task.sleep(for: .seconds(3600)) }
            try await virtual.pacingClock.sleepUntil(deadline)
        }
        let device = FileCaptureDevice(path: TestAudio.cardsWav, clock: clock, logger: logger)
        var first: [AudioFrame] = []
        var sawEnd = false
        for await event in try await device.start() {
            if case .frame(let frame) = event { first.append(frame) }
            if case .finished = event { sawEnd = true }
            if first.count == 5 { await device.stop() }
        }
        #expect(first.count >= 5 && first.count <= 10)
        #expect(!sawEnd, "a stopped stream must not claim the file ended")
        gate.withLock { $0.open = true }
        let (second, finished) = try await collect(device)
        #expect(finished)
        #expect((second.first?.sequence ?? 0) > (first.last?.sequence ?? .max))
    }

    @Test func `a missing file is reported before capture starts`() async {
        let device = FileCaptureDevice(path: "/nonexistent/speech.wav", logger: logger)
        await #expect {
            _ = try await device.start()
        } throws: { error in
            guard case WAVError.unreadable(let path, _) = error else { return false }
            return path == "/nonexistent/speech.wav" && "\(error)".contains("/nonexistent/speech.wav")
        }
    }
}
