import Foundation
import Glibc
import TalkLogging
import TalkTestSupport
import Testing
import Threading

@testable import AudioIO

/// The canceller runs on a thread of its own, realtime where the system allows it: on the cooperative pool its frames
/// waited behind the session, the gate and the sockets, and on a busy desktop behind every busy thread of the machine.
@Suite struct EchoCancellationThreadTests {
    static let rate = AudioFrame.sampleRate

    /// Cleans two seconds of a synthetic echo and returns the threads listed while the frames were coming.
    static func threadsWhileCleaning() async throws -> [ThreadList.Entry] {
        let logger = Logger(label: "test.aec.thread")
        let far = try ResidualEchoTests.speech()
        let near = EchoBenchmark.nearEnd(far: far, path: SyntheticEchoPath(delayMs: 80))
        let t0: UInt64 = 5_000_000_000
        let playback = EchoReferencePlayback(SilentPlayback(), now: { t0 }, logger: logger)
        #expect(try await playback.play(PCMBuffer(sampleRate: rate, samples: far)) == .completed)
        let capture = EchoCancellingCapture(FrameListCapture(samples: near, firstSampleNs: t0), reference: playback.reference, logger: logger)
        var listed: [ThreadList.Entry] = []
        var frames = 0
        for await event in try await capture.start() {
            if case .frame = event { frames += 1 }
            if frames == 10 { listed = ThreadList.current() }
            if event == .finished { break }
        }
        await capture.stop()
        #expect(frames > 10)
        return listed
    }

    @Test func `the canceller's frames are cleaned on a thread the system lists as echo-cancel`() async throws {
        let listed = try await Self.threadsWhileCleaning()
        #expect(listed.map(\.name).contains(EchoCancellingCapture.threadName))
    }

    @Test func `where the system allows realtime, the canceller's thread runs round-robin realtime`() async throws {
        let allowed = await realtimeAllowed(priority: AudioThreadPriority.realtimePriority)
        let listed = try await Self.threadsWhileCleaning()
        let thread = try #require(listed.first { $0.name == EchoCancellingCapture.threadName })
        #expect(thread.policy == (allowed ? ThreadList.roundRobin : 0))
    }
}
