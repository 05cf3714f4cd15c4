/// The session's timers, one of each name (`TurnTaking.Timer`): arming a name replaces its timer, cancelling ends
/// it, and a firing overtaken by a later arm or cancel is not delivered (`take` says no). One mechanism on the
/// session's clock (the tests' manual clock) instead of a `Task` and a generation counter per timer.
struct NamedTimers {
    private var running: [TurnTaking.Timer: (id: Int, task: Task<Void, Never>)] = [:]
    private var armed = 0

    /// Arms `timer`: after `delay` on `clock`, `fire` is called with the arming's id, which the owner hands to `take`.
    mutating func arm(_ timer: TurnTaking.Timer, after delay: Duration, clock: TalkClock,
                      fire: @escaping @Sendable (_ id: Int) async -> Void) {
        cancel(timer)
        armed += 1
        let id = armed
        running[timer] = (id, Task {
            do { try await clock.sleep(delay) } catch { return }
            await fire(id)
        })
    }

    mutating func cancel(_ timer: TurnTaking.Timer) {
        running.removeValue(forKey: timer)?.task.cancel()
    }

    mutating func cancelAll() {
        for (_, timer) in running { timer.task.cancel() }
        running = [:]
    }

    /// Whether firing `id` is still `timer`'s arming (it is then disarmed); false for one replaced or cancelled since.
    mutating func take(_ timer: TurnTaking.Timer, id: Int) -> Bool {
        guard running[timer]?.id == id else { return false }
        running[timer] = nil
        return true
    }

    func isArmed(_ timer: TurnTaking.Timer) -> Bool { running[timer] != nil }
}
