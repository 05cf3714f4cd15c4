import Foundation
import Synchronization
import Testing

/// A private D-Bus session bus with a test notification server on it (`tools/notification-server`, Python): what a
/// desktop's notification daemon would be, recording every notification and clicking buttons on command. Tests give
/// its `busAddress` to the code under test as `DBUS_SESSION_BUS_ADDRESS`.
package final class NotificationServer: @unchecked Sendable {
    package let busAddress: String
    package let logPath: String
    private let server: ChildProcess.Piped

    /// One recorded call: `Notify` (with id, summary, body, actions as [key, label], urgency 0-2, timeout) or `CloseNotification`.
    package struct Call: Sendable, Equatable {
        package var call: String
        package var id: Int
        package var summary: String
        package var body: String
        package var actions: [[String]]
        package var urgency: Int?
        package var hints: [String: String]
    }

    package init(actions: Bool = true) throws {
        let folder = NSTemporaryDirectory() + "notify-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        logPath = folder + "/notifications.jsonl"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        // The server starts the bus itself and ends it when it ends: when its stdin closes too, so a test process
        // that dies leaves neither behind.
        let script = TestInputs.packageRoot + "/tools/notification-server/notification_server.py"
        server = try ChildProcess.spawnPiped(
            ["python3", script, "--start-bus", "--log", logPath] + (actions ? [] : ["--no-actions"]),
            environment: ProcessInfo.processInfo.environment)
        guard let ready = server.readLine(within: Self.startBound), ready.hasPrefix("ready unix:") else {
            Self.end(server.pid)
            throw CommandFailure("the test notification server did not start within \(Self.startBound) "
                                 + "(dbus-daemon, and python3 with dbus_next: scripts/install-deps.sh)")
        }
        busAddress = String(ready.dropFirst("ready ".count))
    }

    /// Every call recorded so far.
    package func calls() -> [Call] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            let hints = (object["hints"] as? [String: Any] ?? [:]).mapValues { "\($0)" }
            return Call(call: object["call"] as? String ?? "", id: object["id"] as? Int ?? 0,
                        summary: object["summary"] as? String ?? "", body: object["body"] as? String ?? "",
                        actions: object["actions"] as? [[String]] ?? [], urgency: object["urgency"] as? Int, hints: hints)
        }
    }

    package var notifications: [Call] { calls().filter { $0.call == "Notify" } }

    /// Polls the record off the pool until `condition` holds; false after `timeout` (a broken notifier).
    package func wait(timeout: Duration = .seconds(20), until condition: @escaping @Sendable ([Call]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(calls()) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition(calls())
    }

    /// Clicks `action` on notification `id`, as a user would.
    package func click(_ id: Int, _ action: String) {
        server.stdin.write(Data("invoke \(id) \(action)\n".utf8))
        if server.readLine(within: Self.replyBound) == nil {
            Issue.record("the test notification server did not confirm the click on \(id) \(action) within \(Self.replyBound)")
        }
    }

    package func stop() {
        guard !stopped.withLock({ done in defer { done = true }; return done }) else { return }
        Self.end(server.pid)
    }

    /// Hang bounds: the server starts in a second or two (Python, then its own dbus-daemon), answers a click at once,
    /// and ends its bus within 5 s of SIGTERM.
    static let startBound: Duration = .seconds(60)
    static let replyBound: Duration = .seconds(20)
    static let stopBound: Duration = .seconds(15)

    /// SIGTERM (the server then ends its bus), SIGKILL if it has not ended within `stopBound`, and the exit reaped
    /// (`ChildProcess.end`).
    private static func end(_ pid: pid_t) { ChildProcess.end(pid, within: stopBound) }

    private let stopped = Mutex(false)

    deinit { stop() }
}
