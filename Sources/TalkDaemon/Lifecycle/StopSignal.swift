import Foundation
import Glibc
import Synchronization
import TalkLogging

/// Why the daemon stops: the first of a signal, a deadline (`--seconds`), the `stop` command or the turn limit
/// (`fire`). A SIGINT or SIGTERM that comes while that clean stop is still under way ends the process at once
/// (exit status 128 + the signal): the user asked twice.
final class StopSignal: Sendable {
    private struct State {
        var reason: String?
        var waiters: [CheckedContinuation<String, Never>] = []
    }

    private let state = Mutex(State())
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    var hasFired: Bool { reason != nil }

    /// Why it fired; nil while the daemon runs.
    var reason: String? { state.withLock { $0.reason } }

    /// Reads `signals` until they end or the task is cancelled (`ServiceGroup.run` runs it beside the daemon).
    func follow(_ signals: UnixSignals) async {
        for await signal in signals {
            if hasFired {
                logger.notice("a second \(signal) while stopping: exiting now")
                _exit(128 + signal.rawValue)
            }
            logger.notice("\(signal): stopping (a second \(signal) exits at once)")
            fire("\(signal)")
        }
    }

    func fire(_ why: String) {
        let waiting: [CheckedContinuation<String, Never>] = state.withLock { state in
            guard state.reason == nil else { return [] }
            state.reason = why
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiting { waiter.resume(returning: why) }
    }

    /// Fires after `seconds` (`--seconds`), unless something else stopped the daemon first. The task is the caller's
    /// to cancel.
    func deadline(seconds: Double) -> Task<Void, Never> {
        Task { [weak self] in
            do { try await Task.sleep(for: .milliseconds(Int(seconds * 1000))) } catch { return }
            self?.fire("\(seconds) s")
        }
    }

    /// The reason, once it fired.
    func wait() async -> String {
        await withCheckedContinuation { continuation in
            let done: String? = state.withLock { state in
                if let reason = state.reason { return reason }
                state.waiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}
