import Foundation
import Synchronization
import Testing

/// A private system bus with Debian's rtkit-daemon on it (`tools/realtime-kit-bus`, Python): what a desktop's system
/// bus and rtkit are, with a stand-in for polkit's authority that answers as `polkit` says (polkit's own policy for
/// rtkit grants only to an active login session, which this machine has none of). Tests run `RealtimeProbe` against
/// its `address` (as `DBUS_SYSTEM_BUS_ADDRESS`), as an account without realtime rights.
package final class RealtimeKitBus: @unchecked Sendable {
    package enum Polkit: String, Sendable { case allow, deny, absent }

    package let address: String
    private let folder: String
    private let logPath: String
    private let child: ChildProcess.Piped
    private let stopped = Mutex(false)

    /// What the tests need: rtkit and a bus to put it on (python3 with dbus_next is scripts/install-deps.sh's too).
    package static let inputs: [TestInput] = [
        TestInput(name: "rtkit-daemon (Debian package rtkit)", remedy: "apt-get install rtkit, or run make test") {
            FileManager.default.isExecutableFile(atPath: rtkitDaemon) ? rtkitDaemon : nil
        },
        .program("dbus-daemon", package: "dbus-daemon"),
        .program("setpriv", package: "util-linux"),
        .program("prlimit", package: "util-linux"),
    ]
    static let rtkitDaemon = "/usr/libexec/rtkit-daemon"

    /// Starts the bus, the polkit stand-in (unless `.absent`) and rtkit with `rtkitArguments` (none: `rtkit` false).
    /// rtkit runs with `--no-limit-resources`: with its own limits (RLIMIT_NPROC 3 for the rtkit user) a second rtkit on
    /// the machine (a desktop's own, or another test's) cannot start its threads.
    package init(polkit: Polkit = .allow, rtkit: Bool = true, rtkitArguments: [String] = []) throws {
        for input in Self.inputs { _ = try input.path() }
        var template = Array((NSTemporaryDirectory() + "/rtkit-bus-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CommandFailure("mkdtemp failed: errno \(errno)") }
        folder = String(cString: made)
        logPath = folder + "/log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let script = TestInputs.packageRoot + "/tools/realtime-kit-bus/realtime_kit_bus.py"
        var arguments = ["python3", script, "--dir", folder, "--log", logPath, "--polkit", polkit.rawValue]
        arguments += rtkit ? ["--", "--no-limit-resources"] + rtkitArguments : ["--no-rtkit"]
        child = try ChildProcess.spawnPiped(arguments, environment: TestInputs.environment)
        guard let ready = child.readLine(within: Self.startBound), ready.hasPrefix("ready unix:") else {
            Self.end(child.pid)
            throw CommandFailure("the private system bus with rtkit did not start within \(Self.startBound): "
                                 + ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""))
        }
        address = String(ready.dropFirst("ready ".count))
    }

    /// rtkit's own lines and each polkit check (`polkit ACTION uid=U allowed=B`), for a failing test's message.
    package var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    package func stop() {
        guard !stopped.withLock({ done in defer { done = true }; return done }) else { return }
        try? child.stdin.close()
        Self.end(child.pid)
        try? FileManager.default.removeItem(atPath: folder)
    }

    deinit { stop() }

    /// Hang bounds: Python, the bus and rtkit start in a second or two; each ends within 5 s of SIGTERM.
    static let startBound: Duration = .seconds(60)
    static let stopBound: Duration = .seconds(15)

    /// One run of `RealtimeProbe` as an account without realtime rights: `nobody` with `RLIMIT_RTPRIO` 0 (the test
    /// runs as root; otherwise as the test's own account with `RLIMIT_RTPRIO` 0), `DBUS_SYSTEM_BUS_ADDRESS` set to
    /// `systemBus`. What it printed, and its realtime thread as /proc lists it.
    package struct ProbeRun: Sendable, CustomStringConvertible {
        /// `AudioThreadPriority.Outcome`'s description, as the probe printed it.
        package var outcome: String
        /// `/proc/<pid>/task/<tid>/stat`'s policy (0 normal, 2 round-robin, 5 idle) and realtime priority.
        package var policy: Int
        package var priority: Int
        /// The policy of the probe's main thread, which never asks: what the thread had before it asked (the test's
        /// own, inherited: idle under /work/coord/bg, normal otherwise).
        package var startingPolicy: Int
        /// The process's `RLIMIT_RTTIME` hard limit from /proc/<pid>/limits, µs (nil: unlimited).
        package var timeLimitHard: UInt64?
        package var description: String { "outcome=\(outcome) policy=\(policy) priority=\(priority) starting policy=\(startingPolicy) rttime=\(timeLimitHard.map(String.init) ?? "unlimited")" }
    }

    /// `arguments`: the probe's own (none: an audio thread's request; `bounded-decoder`: the live decoder's).
    package static func runProbe(systemBus: String, arguments: [String] = []) async throws -> ProbeRun {
        let probe = TestInputs.buildDirectory + "/RealtimeProbe"
        guard FileManager.default.isExecutableFile(atPath: probe) else {
            throw CommandFailure("RealtimeProbe is not built beside the tests (swift build --build-tests)")
        }
        let account = geteuid() == 0 ? ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"] : []
        let child = try ChildProcess.spawnPiped(account + ["prlimit", "--rtprio=0", "--", probe] + arguments, environment: [
            "PATH": TestInputs.environment["PATH"] ?? "/usr/bin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": systemBus,
        ])
        defer {
            try? child.stdin.close()
            end(child.pid)
        }
        let line = try await offPool { child.readLine(within: startBound) }
        guard let line, line.hasPrefix("tid="), let space = line.firstIndex(of: " "),
            line[space...].hasPrefix(" outcome=")
        else { throw CommandFailure("RealtimeProbe printed \(line ?? "nothing") within \(startBound)") }
        let tid = line.dropFirst("tid=".count).prefix { $0 != " " }
        let outcome = String(line[line.index(space, offsetBy: " outcome=".count)...])
        let (policy, priority) = try scheduling(pid: child.pid, tid: String(tid))
        let (startingPolicy, _) = try scheduling(pid: child.pid, tid: String(child.pid))
        let limits = try String(contentsOfFile: "/proc/\(child.pid)/limits", encoding: .utf8)
        let rttime = limits.split(separator: "\n").first { $0.hasPrefix("Max realtime timeout") }
            .map { $0.dropFirst("Max realtime timeout".count).split(separator: " ") }
        let hard = rttime.flatMap { $0.count > 1 ? UInt64($0[1]) : nil }
        return ProbeRun(outcome: outcome, policy: policy, priority: priority, startingPolicy: startingPolicy, timeLimitHard: hard)
    }

    /// A thread's policy and realtime priority from `/proc/<pid>/task/<tid>/stat` (fields 41 and 40).
    private static func scheduling(pid: pid_t, tid: String) throws -> (policy: Int, priority: Int) {
        let stat = try String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8)
        // After the name in parentheses: field 3 (state) onwards, so fields 40 and 41 are the 38th and 39th.
        let fields = stat[stat.index(after: stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
        guard fields.count > 38, let priority = Int(fields[37]), let policy = Int(fields[38]) else {
            throw CommandFailure("unreadable /proc/\(pid)/task/\(tid)/stat: \(stat)")
        }
        return (policy, priority)
    }

    /// SIGTERM, SIGKILL if it has not ended within `stopBound`, and the exit reaped (`ChildProcess.end`).
    private static func end(_ pid: pid_t) { ChildProcess.end(pid, within: stopBound) }
}
