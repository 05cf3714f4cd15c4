import ChildProcessSpawn
import Foundation
import Synchronization

/// A private D-Bus session bus with a test notification server on it (`tools/notification-server`, Python): what a
/// desktop's notification daemon would be, recording every notification and clicking buttons on command. Tests give
/// its `busAddress` to the code under test as `DBUS_SESSION_BUS_ADDRESS`.
package final class NotificationServer: @unchecked Sendable {
    package let busAddress: String
    package let logPath: String
    private let serverPid: pid_t
    private let commands: FileHandle
    private let replies: FileHandle

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
        let (serverPid, serverOut, serverIn) = try Self.spawn(
            ["python3", script, "--start-bus", "--log", logPath] + (actions ? [] : ["--no-actions"]),
            environment: ProcessInfo.processInfo.environment)
        self.serverPid = serverPid
        commands = serverIn
        replies = serverOut
        guard let ready = Self.readLine(serverOut), ready.hasPrefix("ready unix:") else {
            kill(serverPid, SIGTERM)
            ChildProcess.wait(serverPid)
            throw CommandFailure("the test notification server did not start (dbus-daemon, and python3 with dbus_next: scripts/install-deps.sh)")
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
        commands.write(Data("invoke \(id) \(action)\n".utf8))
        _ = Self.readLine(replies)
    }

    package func stop() {
        guard !stopped.withLock({ done in defer { done = true }; return done }) else { return }
        kill(serverPid, SIGTERM)
        ChildProcess.wait(serverPid)
    }

    private let stopped = Mutex(false)

    deinit { stop() }

    private static func readLine(_ handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while true {
            let chunk = handle.readData(ofLength: 1)
            guard let byte = chunk.first else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }

    /// Starts `arguments` through /usr/bin/env with pipes for stdin and stdout; stderr is discarded.
    private static func spawn(_ arguments: [String], environment: [String: String]) throws -> (pid_t, FileHandle, FileHandle) {
        var output: [Int32] = [0, 0], input: [Int32] = [0, 0]
        guard pipe(&output) == 0, pipe(&input) == 0 else { throw CommandFailure("pipe failed") }
        [output[0], input[1]].forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
        // The child's ends: it has its own copies once started, and neither is needed here if it was not.
        defer {
            close(output[1])
            close(input[0])
        }
        let pid: pid_t
        do {
            pid = try PosixSpawn.spawn(
                "/usr/bin/env", arguments, environment: environment, stdin: .descriptor(input[0]), stdout: .descriptor(output[1]),
                stderr: .devNull)
        } catch {
            throw CommandFailure("cannot start \(arguments[0]): \(error.reason)")
        }
        return (pid, FileHandle(fileDescriptor: output[0], closeOnDealloc: true), FileHandle(fileDescriptor: input[1], closeOnDealloc: true))
    }
}
