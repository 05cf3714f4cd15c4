import AudioIO
import Foundation
import Glibc
import SessionBridge

/// `openclaw-talk run` as a child of a benchmark: this very binary, with config and state in a private
/// folder, its JSON events read back from stdout, its CPU time from /proc. It ends with the benchmark (SIGKILL
/// when the benchmark's process is gone, however it went), and its own end is seen at once (`ChildExit`).
package final class TalkChild: Sendable {
    package let pid: pid_t
    package let home: String
    private let outPath: String
    private let errPath: String
    private let exit: ChildExit

    /// Starts `run` with `arguments` and `environment` over this process's; `home` must be a fresh folder the caller owns.
    /// `binary`: another build's `openclaw-talk` to run instead of this one (a before binary judged by this bench).
    package init(_ arguments: [String], home: String, environment extra: [String: String] = [:], binary: String? = nil) async throws {
        self.home = home
        let (outPath, errPath) = (home + "/stdout", home + "/stderr")
        (self.outPath, self.errPath) = (outPath, errPath)
        let binary = try binary.map(Self.executable) ?? Self.ownBinary()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = home + "/state"
        environment["XDG_CONFIG_HOME"] = home + "/config"
        environment.merge(extra) { $1 }
        let pid = try await ChildSpawn.onSpawnThread { [environment] in
            try ChildSpawn.spawn(
                binary, ["run"] + arguments, environment: environment, outputPath: outPath, errorPath: errPath,
                parentDeathSignal: .kill)
        }
        self.pid = pid
        exit = ChildExit(pid: pid)
    }

    static func executable(_ path: String) throws(ChildSpawn.StartError) -> String {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw .cannotStart(path: path, reason: "not an executable file") }
        return path
    }

    package static func ownBinary() throws(ChildSpawn.StartError) -> String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw .cannotStart(path: path, reason: "cannot find this program's binary")
        }
        return path
    }

    package var stdout: String { String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self) }
    package var stderr: String { String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self) }

    /// The playback underruns its log reported (`PulsePlayback.underrunMessage`: inside a sound or between sounds).
    package var playbackUnderruns: Int { stderr.split(separator: "\n").filter { $0.contains(PulsePlayback.underrunMessage) }.count }

    package var events: [JSONValue] { stdout.split(separator: "\n").compactMap { JSONValue.parse(Array($0.utf8)) } }

    /// Whether the child still runs.
    package var isRunning: Bool { exit.status == nil }
    /// Its exit status (128 + the signal when killed) once it has ended.
    package var exitStatus: Int32? { exit.status }

    /// Waits for its end; nil when the waiting task is cancelled first.
    package func exited() async -> Int32? { await exit.wait() }

    /// Whether it ends within `timeout`.
    package func ends(within timeout: Duration) async -> Bool { await exit.ends(within: timeout) }

    /// Sends it `signal` while it runs.
    package func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits (bounded) until stdout holds `text` at least `count` times; false when it did not in time or the child ended.
    package func waitFor(_ text: String, count: Int = 1, upTo timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, isRunning {
            if stdout.components(separatedBy: text).count - 1 >= count { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return stdout.components(separatedBy: text).count - 1 >= count
    }

    /// User and system CPU seconds the child has used so far (fields 14 and 15 of /proc/PID/stat).
    package var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command name: field 3 is at index 0, so utime (14) and stime (15) are at 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The child's CPU time so far and when it was read: the start of a `cpuPercent(since:)` measurement.
    package struct CPUMark: Sendable {
        let cpuSeconds: Double
        let at: ContinuousClock.Instant
    }

    package var cpuMark: CPUMark { CPUMark(cpuSeconds: cpuSeconds, at: .now) }

    /// The child's CPU use from `mark` to now, in percent of one core.
    package func cpuPercent(since mark: CPUMark) -> Double {
        let elapsed = ContinuousClock.now - mark.at
        return (cpuSeconds - mark.cpuSeconds) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) * 100
    }

    /// The child's CPU use over the next `seconds`, in percent of one core.
    package func cpuPercent(over seconds: Double) async -> Double {
        let mark = cpuMark
        try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        return cpuPercent(since: mark)
    }

    /// SIGTERM (the clean stop), then waits for the end, killing it after `timeout`. SIGKILL ends the child in
    /// milliseconds; the second bound only catches the impossible.
    package func stop(timeout: Duration = .seconds(30)) async {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if await exit.ends(within: timeout) { return }
        kill(pid, SIGKILL)
        _ = await exit.ends(within: .seconds(10))
    }
}
