import Dispatch
import Foundation
import Synchronization
import TalkService

/// The daemon's sd_notify messages, sent off the cooperative pool: `sd_notify` blocks while systemd's socket is
/// full, and a pool thread blocked there (there are two on two cores) would freeze the whole daemon. One serial
/// queue sends them in order; past 64 waiting, new ones are dropped rather than piled up.
final class SystemdNotifications: Sendable {
    private let notifier = ServiceNotifier()
    private let queue = DispatchQueue(label: "sd-notify")
    private let pending = Mutex(0)

    var watchdogInterval: Duration? { notifier.watchdogInterval() }

    func send(_ message: @escaping @Sendable (ServiceNotifier) -> Void) {
        let admitted = pending.withLock { n in
            guard n < 64 else { return false }
            n += 1
            return true
        }
        guard admitted else { return }
        queue.async { [self] in
            message(notifier)
            pending.withLock { $0 -= 1 }
        }
    }

    /// Waits (at most a second) until what was queued is sent: STOPPING must go out before the process ends.
    func flush() async {
        let sent = DispatchSemaphore(value: 0)
        queue.async { sent.signal() }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread { _ = sent.wait(timeout: .now() + 1); done.resume() }.start()
        }
    }
}
