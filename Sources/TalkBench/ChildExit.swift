import ChildProcessSpawn
import Foundation
import Glibc
import Synchronization

/// The end of a child process, seen the moment it happens: a thread of its own blocks in `waitpid` on it (and
/// reaps it). Foundation's `Process.isRunning` is not used for this: on Linux one child that closes the
/// descriptors it inherited leaves Foundation's monitor blocked in `wait4` on it, and no other child's end is
/// noticed after that (a soak went on for minutes after its daemon had died).
package final class ChildExit: Sendable {
    private struct State {
        var status: Int32?
        var waiters: [UInt64: CheckedContinuation<Int32?, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Watches `pid`, a child of this process that nothing else waits for.
    package init(pid: pid_t) {
        let thread = Thread { [self] in
            var status: Int32 = 0
            var rc: pid_t
            repeat { rc = waitpid(pid, &status, 0) } while rc < 0 && errno == EINTR
            ended(rc == pid ? PosixSpawn.exitStatus(status) : -1)
        }
        thread.name = "bench-child-exit"
        thread.start()
    }

    private func ended(_ status: Int32) {
        let waiters = state.withLock { state in
            state.status = status
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        waiters.forEach { $0.resume(returning: status) }
    }

    /// The exit status (128 + the signal when killed) once the child has ended; nil while it runs.
    package var status: Int32? { state.withLock { $0.status } }

    /// Waits for the end and returns its status; nil when the waiting task is cancelled first.
    package func wait() async -> Int32? {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Int32?, Never>) in
                let now: Int32?? = state.withLock { state in
                    if let status = state.status { return .some(status) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = waiter
                    return .none
                }
                if let now { waiter.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }

    /// Whether the child ends within `timeout`.
    package func ends(within timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.wait() != nil }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first || status != nil
        }
    }
}
