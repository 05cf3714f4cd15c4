import Foundation
import Synchronization
import TalkLogging
import TalkTestSupport
import Testing

@testable import AudioIO

/// The far-end timeline: what was played, where on the clock, and where it was cut off.
@Suite struct EchoReferenceTests {
    static let ns = EchoReference.nanosecondsPerSample

    @Test func `a window reads what was scheduled there and silence around it`() {
        let reference = EchoReference()
        let t0: UInt64 = 10_000_000_000
        reference.schedule((1...320).map { Int16($0) }, at: t0)
        #expect(reference.samples(from: t0, count: 320) == (1...320).map { Int16($0) })
        // Half a frame early: silence, then the sound's first 160 samples.
        let early = reference.samples(from: t0 - 160 * Self.ns, count: 320)
        #expect(early == [Int16](repeating: 0, count: 160) + (1...160).map { Int16($0) })
        #expect(reference.samples(from: t0 + 400 * Self.ns, count: 10) == [Int16](repeating: 0, count: 10))
    }

    @Test func `a stop cuts the rest and a new sound replaces what was scheduled after its start`() async throws {
        let reference = EchoReference()
        let t0: UInt64 = 10_000_000_000
        reference.schedule([Int16](repeating: 7, count: 1600), at: t0)
        reference.cut(at: t0 + 800 * Self.ns)
        #expect(reference.samples(from: t0 + 700 * Self.ns, count: 200) == [Int16](repeating: 7, count: 100) + [Int16](repeating: 0, count: 100))
        reference.schedule([Int16](repeating: 9, count: 100), at: t0 + 50 * Self.ns)
        #expect(reference.samples(from: t0, count: 200) == [Int16](repeating: 7, count: 50) + [Int16](repeating: 9, count: 100) + [Int16](repeating: 0, count: 50))

        // The playback tap schedules a sound from its start and cuts it where stop() silenced the speaker.
        let now = Mutex<UInt64>(t0)
        let device = HeldPlayback()
        let tap = EchoReferencePlayback(device, now: { now.withLock { $0 } }, logger: Logger(label: "test", handler: InMemoryLogHandler()))
        let playing = Task { try await tap.play(PCMBuffer(sampleRate: 16_000, samples: [Int16](repeating: 5, count: 16_000))) }
        while await !device.started { await Task.yield() }
        #expect(tap.reference.samples(from: t0 + 8000 * Self.ns, count: 10) == [Int16](repeating: 5, count: 10))
        now.withLock { $0 = t0 + 4000 * Self.ns }
        await tap.stop()
        #expect(try await playing.value == .stopped)
        #expect(tap.reference.samples(from: t0 + 3990 * Self.ns, count: 20) == [Int16](repeating: 5, count: 10) + [Int16](repeating: 0, count: 10))
    }

    @Test(arguments: [-60, 0, 30, 90, 200])
    func `the aligner finds how far the echo lags the reference`(lagMs: Int) throws {
        let speech = try AudioFileReader.readMono(path: TestAudio.goForwardRaw).samples
        let shift = lagMs * 16
        var aligner = EchoAligner()
        var lastCorrection: Int64?
        for frame in 0..<(speech.count / 320) {
            let far = Array(speech[frame * 320..<frame * 320 + 320])
            let near = (0..<320).map { i -> Int16 in
                let j = frame * 320 + i - shift
                return speech.indices.contains(j) ? speech[j] / 2 : 0
            }
            if let c = aligner.add(reference: far, capture: near) { lastCorrection = c }
        }
        let measured = try #require(aligner.measuredLagMs, "no clear lag found for \(lagMs) ms")
        #expect(abs(measured - Double(lagMs)) <= 4)
        // Inside the canceller's window nothing moves; outside it the move brings the lag to 60 ms.
        if EchoTuning.Alignment.acceptedMs.contains(lagMs) {
            #expect(lastCorrection == nil)
        } else {
            let c = try #require(lastCorrection)
            #expect(abs(Double(c) / 1e6 - Double(EchoTuning.Alignment.targetMs - lagMs)) <= 4)
        }
    }

    /// PipeWire's Pulse server now and then drops one graph quantum (1024 samples at 48 kHz, 341 at 16 kHz) from
    /// the loopback: from then on the echo came 21 ms sooner after its reference, and the converged canceller
    /// lost it (ERLE 9 to 15 dB on that run instead of 40 to 60). The aligner reads the reference that much
    /// later again, to the sample, so the echo keeps the lag the canceller converged on. An echo that jumps to
    /// before its reference (40 ms, -640 samples: a placement off under load) is moved back the same way; the
    /// samples were once compared only at lags of 0 and more, and such an echo was left where nothing cancels it.
    @Test(arguments: [600 - 341, -640])
    func `an echo that jumps nearer its reference, or before it, is moved back to its lag to the sample`(lagAfter: Int) throws {
        var aligner = EchoAligner()
        let (lags, jumpFrame) = try Self.lags(through: &aligner, jumpingTo: lagAfter, scrambled: false)
        // Before the drop the echo lagged its reference by 600 samples (37.5 ms, inside the window: left alone).
        #expect(lags[jumpFrame - 1] == 600)
        // Within 1.5 s of the drop it lags by exactly 600 again, and stays there.
        let settled = jumpFrame + 75
        #expect(lags[settled...].allSatisfy { $0 == 600 }, "lags after the drop: \(Set(lags[settled...]).sorted())")
    }

    /// A held echo that leaves the window where its samples no longer match the reference (on a loudspeaker the
    /// room changes them; here each sample's sign is scrambled, which leaves the loudness envelope as it was) is
    /// still brought back to the target lag by the envelopes, as before a lag was held, not left uncancelled.
    @Test func `a held echo that leaves the window unconfirmed by its samples is brought to the target lag`() throws {
        var aligner = EchoAligner()
        let (lags, jumpFrame) = try Self.lags(through: &aligner, jumpingTo: -640, scrambled: true)
        #expect(aligner.heldLagSamples == nil)
        #expect(lags[jumpFrame - 1] == 600)
        // Within 1.5 s of the jump the echo lags its reference by 60 ms (960 samples) to within an envelope step.
        let settled = jumpFrame + 75
        #expect(lags[settled...].allSatisfy { abs($0 - 960) <= EchoTuning.Alignment.blockSamples }, "lags after the jump: \(Set(lags[settled...]).sorted())")
    }

    /// A playback underrun puts a gap in what the speaker plays; the stream is placed again from timing estimates that
    /// jitter, so the echo of what follows can lag its reference 2 to 3 ms off where the canceller converged: too little
    /// for the envelopes (`heldToleranceMs`), enough that the converged filters cancelled 15 to 32 dB for 5 s instead of
    /// 47 to 62 (PipeWire under load). Told of the gap, the aligner measures the lag again to the sample and moves the
    /// reference back within a second, from a graph quantum (341 samples) too; where the echo did not shift, nothing
    /// moves.
    @Test(arguments: [600 + 40, 600 - 32, 600 + 48, 600 - 341, 600])
    func `after an announced playback gap an echo a few ms off is put back at its lag to the sample`(lagAfter: Int) throws {
        var aligner = EchoAligner()
        let (lags, jumpFrame) = try Self.lags(through: &aligner, jumpingTo: lagAfter, scrambled: false, announced: true)
        #expect(lags[jumpFrame - 1] == 600)
        #expect(aligner.heldLagSamples == 600)
        // Within a second of the gap (50 frames) the echo lags by exactly 600 again, and stays there.
        let settled = jumpFrame + 50
        #expect(lags[settled...].allSatisfy { $0 == 600 }, "lags after the gap: \(Set(lags[settled...]).sorted())")
    }

    /// An underrun on PulseAudio: the speaker plays 50 ms of silence the reference does not hold, so the echo lags it
    /// 800 samples more, until the playback's next timing estimates place the stream again and the reference follows
    /// the gap (`PlaybackTimeline.underran`). The aligner, told of the gap, leaves that to the placement: moving by the
    /// jump as well put the echo 31 ms before its reference, where neither filter cancels it, for the rest of the
    /// sentence, and the Gateway's voice cut itself off on its leaked words (loopback, 1-minute load 28).
    @Test(arguments: [10, 15, 20, 25, 30])
    func `after an announced gap the placement follows, the echo is not moved off its lag as well`(placedAfterFrames: Int) throws {
        var aligner = EchoAligner()
        let (lags, jumpFrame) = try Self.lags(
            through: &aligner, jumpingTo: 600 + 800, scrambled: false, announced: true, placedAgainAfterFrames: placedAfterFrames)
        #expect(lags[jumpFrame - 1] == 600)
        let placed = jumpFrame + placedAfterFrames
        #expect(lags[placed...].allSatisfy { $0 == 600 }, "lags after the placement: \(Set(lags[placed...]).sorted())")
    }

    static let espeak = TestInput.program("espeak-ng", package: "espeak-ng")

    /// The reference Gateway's voice (espeak-ng's en-us, a steady 117 Hz pitch) as a session's first reply, after 2 s
    /// of silence, its echo `delay` samples later at half level (27.4 and 34.9 ms: lags seen on PipeWire's loopback).
    /// Its envelopes match one pitch period (8.6 ms) off the lag nearly as well as at it; the samples only at it. The
    /// aligner holds the echo's own lag and leaves a reference that was right where it is. Held a period off, it once
    /// moved that reference by 8.6 ms 1 to 2 s into the reply, under the converged canceller and a user's first words
    /// (RunLoopbackTests on PipeWire: the grammar heard nothing of "go forward ten meters").
    @Test(.requires(Self.espeak), arguments: [438, 557, 300, 700, 240, 248, 256, 264])
    func `the aligner holds the lag of a steady voice's echo, not one a pitch period off`(delay: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aligner-voice-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = "Here is a long answer about the weather. The sky stays blue all day."
        let (status, _) = try await ChildProcess.output(try Self.espeak.path(), ["-v", "en-us", "-w", folder + "/voice.wav", "--", text])
        try #require(status == 0)
        let far = [Int16](repeating: 0, count: 32_000) + (try AudioFileReader.readMono(path: folder + "/voice.wav").samples)
        var aligner = EchoAligner()
        var moves: [Int64] = []
        var held: Set<Int> = []
        for start in stride(from: 0, to: far.count - 320, by: 320) {
            let near = (start..<start + 320).map { $0 >= delay ? far[$0 - delay] / 2 : 0 }
            if let move = aligner.add(reference: Array(far[start..<start + 320]), capture: near) { moves.append(move) }
            if let lag = aligner.heldLagSamples { held.insert(lag) }
        }
        #expect(held == [delay], "lags held: \(held.sorted())")
        #expect(moves.isEmpty, "reference moved by \(moves.map { Double($0) / 1e6 }) ms")
    }

    /// The echo's lag behind the reference `aligner` reads, frame by frame (20 ms), over four plays of a clip at half
    /// level: the echo lags 600 samples for the first two plays, then `lagAfter` (`jumpFrame` is the frame the
    /// jump falls in). `scrambled`: after the jump a fixed pseudo-random third of the samples change sign, the same
    /// loudness with samples that no longer match, as a room changes them.
    /// `announced`: the aligner is told of a playback gap as the jump's frame is added. `placedAgainAfterFrames`: that
    /// many frames after the jump the playback places the stream again, and the reference follows the jump.
    static func lags(
        through aligner: inout EchoAligner, jumpingTo lagAfter: Int, scrambled: Bool, announced: Bool = false,
        placedAgainAfterFrames: Int? = nil
    ) throws -> (lags: [Int], jumpFrame: Int) {
        let speech = try AudioFileReader.readMono(path: TestAudio.goForwardRaw).samples
        // With a placement that follows, the jump comes after a pause (1.6 s), where a stream runs dry: the reply's
        // next sentence is late.
        let pause = placedAgainAfterFrames == nil ? [] : [Int16](repeating: 0, count: 25_600)
        let played = speech + speech + pause + speech + speech
        let jump = 2 * speech.count + pause.count
        let delay = { (capturedIndex: Int) -> Int in capturedIndex < jump ? 600 : lagAfter }
        var offset = 0  // how much later than the capture's own index the reference is read
        var lags: [Int] = []
        for frame in 0..<(played.count / 320 - 10) {
            if let placedAgainAfterFrames, frame == jump / 320 + placedAgainAfterFrames { offset -= lagAfter - 600 }
            let start = frame * 320
            let far = (0..<320).map { i in played.indices.contains(start + i + offset) ? played[start + i + offset] : 0 }
            let near = (0..<320).map { i -> Int16 in
                let j = start + i - delay(start + i)
                guard played.indices.contains(j) else { return 0 }
                let flip = scrambled && start + i >= jump && (start + i) * 2_654_435_761 % 7 < 3
                return flip ? -(played[j] / 2) : played[j] / 2
            }
            if announced, frame == jump / 320 { aligner.playbackHadGap() }
            if let ns = aligner.add(reference: far, capture: near) { offset += Int(ns / Int64(EchoReference.nanosecondsPerSample)) }
            lags.append(delay(start) + offset)
        }
        return (lags, jump / 320)
    }
}
