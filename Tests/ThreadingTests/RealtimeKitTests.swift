import Foundation
import TalkTestSupport
import Testing

/// A desktop user's account has no realtime rights of its own (no `CAP_SYS_NICE`, `RLIMIT_RTPRIO` 0); there the audio
/// threads get realtime from rtkit, as the sound server's own do, or they wait behind every busy thread of the desktop
/// (playback underruns, echo cut in as words). Each test runs `RealtimeProbe` as such an account (`nobody`, RLIMIT_RTPRIO
/// 0) against Debian's rtkit-daemon on a private system bus, and reads the thread's policy from /proc.
@Suite(.serialized, .requires(RealtimeKitBus.inputs[0], RealtimeKitBus.inputs[1], RealtimeKitBus.inputs[2], RealtimeKitBus.inputs[3]))
struct RealtimeKitTests {
    @Test func `an account without realtime rights gets its audio thread realtime through rtkit`() async throws {
        let bus = try await offPool { try RealtimeKitBus() }
        defer { bus.stop() }
        let run = try await RealtimeKitBus.runProbe(systemBus: bus.address)
        #expect(run.policy == ThreadList.roundRobin, "\(run)\n\(bus.log)")
        #expect(run.priority == 3, "\(run)")
        #expect(run.outcome == "realtime through rtkit (SCHED_RR 3)", "\(run)")
        // rtkit's default RTTimeUSecMax is 200 ms: the process's limit is at or under it, or rtkit would have refused.
        #expect(run.timeLimitHard == 200_000, "\(run)")
    }

    @Test func `where rtkit allows less, the thread gets rtkit's highest priority and the process rtkit's time limit`() async throws {
        let bus = try await offPool { try RealtimeKitBus(rtkitArguments: ["--max-realtime-priority=2", "--rttime-usec-max=50000"]) }
        defer { bus.stop() }
        let run = try await RealtimeKitBus.runProbe(systemBus: bus.address)
        #expect(run.policy == ThreadList.roundRobin, "\(run)\n\(bus.log)")
        #expect(run.priority == 2, "\(run)")
        #expect(run.timeLimitHard == 50_000, "\(run)")
        #expect(run.outcome == "realtime through rtkit (SCHED_RR 2)", "\(run)")
    }

    /// The live decoder asks rtkit as the audio threads do, for less, and then runs 400 ms in one call, 400 ms of queued
    /// calls and a 300 ms long call: under rtkit's `RLIMIT_RTTIME` of 200 ms the kernel kills a thread that runs that long
    /// without blocking (the probe then prints nothing), so the bounds are what keeps the process alive.
    @Test func `the live decoder's thread gets realtime through rtkit under the audio threads, and catching up does not get it killed`() async throws {
        let bus = try await offPool { try RealtimeKitBus() }
        defer { bus.stop() }
        let run = try await RealtimeKitBus.runProbe(systemBus: bus.address, arguments: ["bounded-decoder"])
        #expect(run.policy == ThreadList.roundRobin, "\(run)\n\(bus.log)")
        #expect(run.priority == 1, "\(run)")
        #expect(run.outcome == "realtime through rtkit (SCHED_RR 1)", "\(run)")
        #expect(run.timeLimitHard == 200_000, "\(run)")
    }

    @Test func `refused by rtkit, the thread stays in the normal class and the outcome says rtkit refused`() async throws {
        let bus = try await offPool { try RealtimeKitBus(polkit: .deny) }
        defer { bus.stop() }
        let run = try await RealtimeKitBus.runProbe(systemBus: bus.address)
        #expect(run.policy == run.startingPolicy && run.policy != ThreadList.roundRobin, "\(run)")
        #expect(run.outcome.hasPrefix("realtime not allowed (Operation not permitted); rtkit refused ("), "\(run)")
        #expect(bus.log.contains("polkit org.freedesktop.RealtimeKit1.acquire-real-time uid=65534 allowed=False"), "\(bus.log)")
    }

    @Test func `with no rtkit on the system bus, the outcome says rtkit is not running`() async throws {
        let bus = try await offPool { try RealtimeKitBus(rtkit: false) }
        defer { bus.stop() }
        let run = try await RealtimeKitBus.runProbe(systemBus: bus.address)
        #expect(run.policy == run.startingPolicy && run.policy != ThreadList.roundRobin, "\(run)")
        #expect(run.outcome == "realtime not allowed (Operation not permitted); rtkit is not running (package rtkit)", "\(run)")
    }

    @Test func `with no system bus, the outcome says so`() async throws {
        let run = try await RealtimeKitBus.runProbe(systemBus: "unix:path=/nonexistent/system_bus_socket")
        #expect(run.policy == run.startingPolicy && run.policy != ThreadList.roundRobin, "\(run)")
        #expect(run.outcome == "realtime not allowed (Operation not permitted); no system bus (No such file or directory)", "\(run)")
    }
}
