import Foundation
import Synchronization
import TalkTestSupport
import Testing
import Threading

/// The live decoder's thread (`ThreadSerialExecutor` with `BoundedRealtime`): realtime where the system allows it, its
/// long calls in the normal class on a companion thread; and, run as the kernel grants it, a process whose decoder
/// catches up for longer than its `RLIMIT_RTTIME` is not killed.
@Suite(.serialized) struct BoundedRealtimeTests {
    @Test func `jobs run realtime where the system allows it, long calls in the normal class on the companion thread`() async throws {
        let allowed = await realtimeAllowed(priority: 1)
        let work = PlacedWork()
        let job = await work.placeOfJob()
        let longCall = try await work.placeOfLongCall()
        #expect(job == .init(name: "bounded-test", realtime: allowed))
        #expect(longCall == .init(name: allowed ? "bounded-test-lo" : "bounded-test", realtime: false))
        #expect(work.runsRealtime == allowed)
    }

    /// The probe runs 400 ms in one call and 400 ms of queued calls on the realtime thread, then a 300 ms long call,
    /// under an `RLIMIT_RTTIME` of 100 ms (soft and hard): without the bounds the kernel kills it (SIGKILL).
    @Test(.enabled(if: geteuid() == 0, "the kernel grants realtime to root; RealtimeKitTests run the rtkit route"))
    func `a decoder catching up for longer than the process's realtime time limit is not killed`() async throws {
        let probe = TestInputs.buildDirectory + "/RealtimeProbe"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--rttime=100000", "--", probe, "bounded-decoder"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let printed = try await offPool { try output.fileHandleForReading.readToEnd() }
        process.waitUntilExit()
        let line = String(decoding: printed ?? Data(), as: UTF8.self)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "status \(process.terminationStatus)")
        #expect(line.contains("outcome=realtime (SCHED_RR 1)"), "\(line)")
    }
}

/// Where a piece of work ran: the thread's name as the system lists it, and whether it was realtime.
struct Place: Equatable, Sendable {
    var name: String
    var realtime: Bool

    static var ofCallingThread: Place { Place(name: ThreadName.ofCallingThread(), realtime: AudioThreadPriority.callingThreadIsRealtime) }
}

actor PlacedWork {
    private let executor = ThreadSerialExecutor(
        name: "bounded-test", realtime: BoundedRealtime(priority: 1, longCallThreadName: "bounded-test-long"))
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    nonisolated var runsRealtime: Bool { executor.runsRealtime }

    func placeOfJob() -> Place { .ofCallingThread }
    /// The long call checks its isolation, as an isolated closure within it does (the phone-loop check's `map`).
    func placeOfLongCall() throws -> Place {
        try executor.outsideRealtime {
            preconditionIsolated()
            return .ofCallingThread
        }
    }
}
