import Foundation

@testable import TalkSession

/// A clock the test moves: `advance` wakes the sleepers whose time has come; wall time is real.
final class ManualClock: @unchecked Sendable {
    private struct Sleeper {
        var id: Int
        var deadline: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private var now: UInt64 = 1_000_000_000
    private var sleepers: [Sleeper] = []
    private var cancelled: Set<Int> = []
    private var nextId = 0

    var clock: TalkClock {
        TalkClock(nowNs: { self.nowNs }, wallNow: { Date() }, sleep: { try await self.sleep($0) })
    }

    var nowNs: UInt64 { lock.withLock { now } }

    /// The deadlines of the sleeps in progress, in ns from now.
    var pending: [UInt64] { lock.withLock { sleepers.map { $0.deadline - now } } }

    func sleep(_ duration: Duration) async throws {
        let (id, deadline) = lock.withLock {
            nextId += 1
            return (nextId, now + UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000))
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let gone = lock.withLock {
                    if cancelled.contains(id) { return true }
                    sleepers.append(Sleeper(id: id, deadline: deadline, continuation: c))
                    return false
                }
                if gone { c.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let sleeper: Sleeper? = lock.withLock {
                cancelled.insert(id)
                guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on and wakes the sleepers now due; returns how many it woke (none: nothing on this clock
    /// can have happened because of the move).
    @discardableResult
    func advance(_ duration: Duration) -> Int {
        let due: [Sleeper] = lock.withLock {
            now += UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
            let due = sleepers.filter { $0.deadline <= now }
            sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
        return due.count
    }

    /// Waits (at most 30 s) until a sleep ends exactly `after` from now: the timer a test is about to run out.
    func waitForSleep(endingIn after: Duration) async -> Bool {
        let ns = UInt64(after.components.seconds) * 1_000_000_000 + UInt64(after.components.attoseconds / 1_000_000_000)
        // Generous: only a session that never sleeps should fail here, not a loaded machine.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if pending.contains(ns) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}

