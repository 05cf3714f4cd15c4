import Foundation
import Threading

// Asks for a realtime thread as the audio threads do (`AudioThreadPriority.raiseCallingThread()`), on a thread of its
// own, prints `tid=TID outcome=OUTCOME`, and holds that thread until stdin ends, so the test reads its policy from
// /proc meanwhile (not from what this process says).
//
// With `bounded-decoder`: asks as the live decoder does (`ThreadSerialExecutor` with `BoundedRealtime`), then does
// what a decoder catching up does on that thread, each part longer than rtkit's 200 ms `RLIMIT_RTTIME` without the
// bounds (one call over many frames, a backlog of queued calls, a long call), and prints the line only after them: a
// process the kernel killed for running realtime too long prints nothing.
if CommandLine.arguments.dropFirst().first == "bounded-decoder" {
    let work = BoundedWork()
    try await work.manyPiecesInOneCall()
    await withTaskGroup(of: Void.self) { backlog in
        for _ in 0..<BoundedWork.pieces { backlog.addTask { await work.spin(milliseconds: BoundedWork.pieceMs) } }
    }
    try await work.longCall()
    FileHandle.standardOutput.write(Data("tid=\(await work.threadID()) outcome=\(work.outcome)\n".utf8))
    while readLine() != nil {}
    exit(0)
}

let ended = DispatchSemaphore(value: 0)
NamedThread.start("rt-probe") {
    let outcome = AudioThreadPriority.raiseCallingThread()
    FileHandle.standardOutput.write(Data("tid=\(threadID()) outcome=\(outcome)\n".utf8))
    while readLine() != nil {}
    ended.signal()
}
ended.wait()

/// The calling thread's id as /proc lists it.
func threadID() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last.map(String.init) ?? "?"
}

/// Work on a bounded realtime thread, as the live decoder's.
actor BoundedWork {
    /// 40 pieces of 10 ms CPU: 400 ms, twice rtkit's limit, in one call and as a backlog of calls.
    static let pieces = 40
    static let pieceMs = 10
    /// A long call of 300 ms CPU (a final pass over a long utterance).
    static let longCallMs = 300

    private let executor: ThreadSerialExecutor
    private let said = OutcomeBox()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    nonisolated var outcome: String { said.value }

    init() {
        let said = said
        executor = ThreadSerialExecutor(name: "rt-probe", realtime: BoundedRealtime(
            priority: 1, longCallThreadName: "rt-probe-long") { said.value = "\($0)" })
    }

    /// Many pieces in one call, the bound looked at between them (as the decoder does between frames).
    func manyPiecesInOneCall() throws {
        for _ in 0..<Self.pieces {
            executor.checkRealtimeBurst()
            Self.burn(milliseconds: Self.pieceMs)
        }
    }

    func spin(milliseconds: Int) { Self.burn(milliseconds: milliseconds) }

    func longCall() throws { try executor.outsideRealtime { Self.burn(milliseconds: Self.longCallMs) } }

    func threadID() -> String { RealtimeProbe.threadID() }

    /// Runs on the CPU, never blocking, for `milliseconds` of the calling thread's CPU time.
    static func burn(milliseconds: Int) {
        func cpu() -> Int {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            return now.tv_sec * 1_000_000_000 + now.tv_nsec
        }
        let end = cpu() + milliseconds * 1_000_000
        while cpu() < end {}
    }
}

final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var text = "not asked"
    var value: String {
        get { lock.withLock { text } }
        set { lock.withLock { text = newValue } }
    }
}
