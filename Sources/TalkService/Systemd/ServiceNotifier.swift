import CSystemd
import Foundation

/// Tells systemd how the daemon is doing (`Type=notify`): READY once serving, STATUS in words,
/// RELOADING around a config reload, WATCHDOG pings. libsystemd's `sd_notify` does nothing when
/// NOTIFY_SOCKET is unset, so outside systemd every call is a no-op.
package struct ServiceNotifier: Sendable {
    package init() {}

    /// True when a message was sent (NOTIFY_SOCKET set and the send worked).
    @discardableResult
    package func ready(status: String? = nil) -> Bool {
        send(["READY=1"] + (status.map { ["STATUS=\(Self.oneLine($0))"] } ?? []))
    }

    @discardableResult
    package func status(_ words: String) -> Bool { send(["STATUS=\(Self.oneLine(words))"]) }

    /// systemd (Type=notify-reload) wants the monotonic time with RELOADING=1; READY=1 ends the reload.
    @discardableResult
    package func reloading() -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return send(["RELOADING=1", "MONOTONIC_USEC=\(usec)"])
    }

    @discardableResult
    package func stopping() -> Bool { send(["STOPPING=1"]) }

    @discardableResult
    package func watchdog() -> Bool { send(["WATCHDOG=1"]) }

    /// How often to ping: half of WatchdogSec, as sd_watchdog_enabled(3) advises; nil when no watchdog.
    package func watchdogInterval() -> Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec / 2))
    }

    private func send(_ fields: [String]) -> Bool {
        sd_notify(0, fields.joined(separator: "\n")) > 0
    }

    private static func oneLine(_ s: String) -> String {
        String(s.map { $0.isNewline ? " " : $0 }.prefix(200))
    }
}
