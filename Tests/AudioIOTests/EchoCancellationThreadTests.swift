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
        let allowed = await Self.realtimeAllowed()
        let listed = try await Self.threadsWhileCleaning()
        let thread = try #require(listed.first { $0.name == EchoCancellingCapture.threadName })
        #expect(thread.policy == (allowed ? ThreadList.roundRobin : 0))
    }

    /// Whether a thread of this process can be moved to realtime: asked on a scratch thread of the kernel directly
    /// (root, CAP_SYS_NICE, RLIMIT_RTPRIO) and, where it refuses, of the system's rtkit (a desktop account's way), so
    /// the answer does not depend on how the audio threads under test ask.
    static func realtimeAllowed() async -> Bool {
        await withCheckedContinuation { done in
            NamedThread.start("rt-probe") {
                var parameters = sched_param(sched_priority: AudioThreadPriority.realtimePriority)
                if sched_setscheduler(0, SCHED_RR, &parameters) == 0 { return done.resume(returning: true) }
                let granted = try? RealtimeKitClient().makeCallingThreadRealtime(priority: AudioThreadPriority.realtimePriority)
                done.resume(returning: granted != nil)
            }
        }
    }
}
