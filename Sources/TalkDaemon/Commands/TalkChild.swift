import Foundation
import SessionBridge

/// `openclaw-talk run` as a child of a benchmark: this very binary, with config and state in a private
/// folder, its JSON events read back from stdout, its CPU time from /proc.
final class TalkChild: @unchecked Sendable {
    let process = Process()
    let home: String
    private let outPath: String
    private let errPath: String

    /// Starts `run` with `arguments` and `environment` over this process's; `home` must be a fresh folder the caller owns.
    init(_ arguments: [String], home: String, environment extra: [String: String] = [:]) throws {
        self.home = home
        outPath = home + "/stdout"
        errPath = home + "/stderr"
        FileManager.default.createFile(atPath: outPath, contents: nil)
        FileManager.default.createFile(atPath: errPath, contents: nil)
        guard let out = FileHandle(forWritingAtPath: outPath), let err = FileHandle(forWritingAtPath: errPath) else {
            throw ValidationError("cannot write in \(home)")
        }
        process.executableURL = URL(fileURLWithPath: try Self.ownBinary())
        process.arguments = ["run"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = home + "/state"
        environment["XDG_CONFIG_HOME"] = home + "/config"
        environment.merge(extra) { $1 }
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
    }

    static func ownBinary() throws -> String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        guard FileManager.default.isExecutableFile(atPath: path) else { throw ValidationError("cannot find this program's binary") }
        return path
    }

    var stdout: String { String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self) }
    var stderr: String { String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self) }

    var events: [JSONValue] { stdout.split(separator: "\n").compactMap { JSONValue.parse(Array($0.utf8)) } }

    /// Waits (bounded) until stdout holds `text` at least `count` times; false when it did not in time or the child ended.
    func waitFor(_ text: String, count: Int = 1, upTo timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, process.isRunning {
            if stdout.components(separatedBy: text).count - 1 >= count { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return stdout.components(separatedBy: text).count - 1 >= count
    }

    /// User and system CPU seconds the child has used so far (fields 14 and 15 of /proc/PID/stat).
    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command name: field 3 is at index 0, so utime (14) and stime (15) are at 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The child's CPU use over the next `seconds`, in percent of one core.
    func cpuPercent(over seconds: Double) async -> Double {
        let (cpu, start) = (cpuSeconds, ContinuousClock.now)
        try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        let elapsed = ContinuousClock.now - start
        return (cpuSeconds - cpu) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) * 100
    }

    /// SIGTERM (the clean stop), then waits for the end, killing it after `timeout`.
    func stop(timeout: Duration = .seconds(30)) async {
        if process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        // Not waitUntilExit: it would spin on this cooperative thread until Foundation notices the exit. SIGKILL
        // ends the child in milliseconds; the bound only catches the impossible.
        let killedBy = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < killedBy { try? await Task.sleep(for: .milliseconds(5)) }
    }
}
