import Foundation
import Glibc
import SessionBridge

/// The reference Gateway (`tools/reference-gateway/refgw.py`) as a child process, for tests and benchmarks (a
/// harness: it lives here, outside the libraries the daemon runs on): started on free loopback ports, its startup JSON read from the first stdout line,
/// driven through its control port, and killed on `stop()` or when the value goes away.
package final class ReferenceGatewayProcess: Sendable {
    /// The first line refgw prints once it listens.
    package struct Startup: Decodable, Sendable {
        package let url: String
        package let port: Int
        package let tls: Bool
        package let tlsFingerprint: String?
        package let controlPort: Int
        package let version: String
        package let schema: String?
        package let setupCode: String?
        package let bootstrapToken: String?
    }

    package let startup: Startup
    private let process: Process

    /// refgw could not be started.
    package enum StartError: Error, CustomStringConvertible {
        case scriptMissing(String)
        case noStartupLine(String)
        package var description: String {
            switch self {
            case .scriptMissing(let p):
                "The reference Gateway is not at \(p); run from the openclaw-talk source folder or pass its path."
            case .noStartupLine(let s):
                "The reference Gateway did not start (is python3 with websockets, cryptography and jsonschema installed? "
                    + "scripts/install-deps.sh installs them): \(s.prefix(400))"
            }
        }
    }

    /// Starts `python3 <repositoryRoot>/tools/reference-gateway/refgw.py --quiet <arguments>`; with
    /// `parentDeathSignal`, it gets that signal when the calling thread ends (start it on `ChildSpawn.onSpawnThread`).
    package init(repositoryRoot: String, arguments: [String], parentDeathSignal: ChildSpawn.ParentDeathSignal? = nil) throws {
        let script = repositoryRoot + "/tools/reference-gateway/refgw.py"
        guard FileManager.default.fileExists(atPath: script) else { throw StartError.scriptMissing(script) }
        var command = (path: "/usr/bin/env", arguments: ["python3", script, "--quiet"] + arguments)
        if let parentDeathSignal { command = try ChildSpawn.dyingWithParent(command.path, command.arguments, signal: parentDeathSignal) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command.path)
        process.arguments = command.arguments
        process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let line = Self.startupLine(from: out.fileHandleForReading.fileDescriptor, within: Self.startupSeconds)
        guard let startup = try? JSONDecoder().decode(Startup.self, from: line.bytes) else {
            kill(process.processIdentifier, SIGKILL)   // a Gateway that hangs in its start-up may not answer SIGTERM
            let printed = String(decoding: line.bytes, as: UTF8.self)
            throw StartError.noStartupLine(line.timedOut ? "no start-up line within \(Self.startupSeconds) s (printed so far: '\(printed)')" : printed)
        }
        self.startup = startup
    }

    /// How long refgw may take to print its start-up line: a hang bound (Python's imports take a second or two, more
    /// on a loaded machine). Without it a Gateway that never started held its test, and the pass, until the time limit.
    static let startupSeconds = 60

    /// The first line on `fd` (without its newline), read byte by byte so nothing after it is taken; whether the
    /// bound passed first.
    private static func startupLine(from fd: Int32, within seconds: Int) -> (bytes: Data, timedOut: Bool) {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var line = Data()
        var byte: UInt8 = 0
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return (line, true) }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(min(left.components.seconds * 1000 + 1, 1000)))
            if polled < 0 && errno != EINTR { return (line, false) }
            guard polled > 0 else { continue }
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            guard n == 1, byte != 10 else { return (line, false) }
            line.append(byte)
        }
    }

    /// For a benchmark: started on `ChildSpawn`'s thread with SIGKILL as its parent-death signal, so that a
    /// benchmark that is killed (SIGKILL included) leaves no Gateway running.
    package static func forBenchmark(repositoryRoot: String, arguments: [String]) async throws -> ReferenceGatewayProcess {
        try await ChildSpawn.onSpawnThread {
            try ReferenceGatewayProcess(repositoryRoot: repositoryRoot, arguments: arguments, parentDeathSignal: .kill)
        }
    }

    /// A control command that did not get a usable answer. Callers read fields of the reply, so a garbled
    /// or refused one must stop them rather than read as an empty list.
    package enum ControlError: Error, Equatable, CustomStringConvertible {
        /// The reply was not the JSON object with `ok` that refgw sends (or there was none).
        case malformedReply(command: String, reply: String)
        /// refgw answered `{"ok": false, "error": ...}`.
        case refused(command: String, reason: String)
        /// The reply carries another command's tag (or none): it answers something else.
        case mismatchedReply(command: String, reply: String)
        /// No whole reply within the time limit.
        case noReply(command: String, seconds: Int)
        package var description: String {
            switch self {
            case .malformedReply(let command, let reply):
                "The reference Gateway's control port gave no valid answer to '\(command)': "
                    + (reply.isEmpty ? "nothing before it closed" : "'\(reply.prefix(200))'")
            case .refused(let command, let reason):
                "The reference Gateway refused the control command '\(command)': \(reason)"
            case .mismatchedReply(let command, let reply):
                "The reference Gateway's control port answered '\(command)' with another command's reply: '\(reply.prefix(200))'"
            case .noReply(let command, let seconds):
                "The reference Gateway's control port did not answer '\(command)' within \(seconds) s"
            }
        }
    }

    /// Sends one control command (a line, e.g. `restart 500`) and returns its JSON reply.
    /// - Throws: `ControlError` when the answer is not refgw's JSON reply to this command or says `ok: false`.
    @discardableResult
    package func control(_ line: String) throws -> JSONValue {
        try Self.control(line, port: startup.controlPort)
    }

    /// How long a control command may take to answer: a hang bound (`fuzz ... wait` takes seconds).
    static let controlReplySeconds = 300

    /// `control(_:)` to the control port on loopback `port`. Each command goes on a connection of its own,
    /// tagged (`@<tag> <line>`, a tag new to this call), and only a reply carrying that tag back (refgw's
    /// `controlId`) is taken as its answer.
    package static func control(_ line: String, port: Int) throws -> JSONValue {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw StorageError.io(path: "control socket", errno: errno) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: controlReplySeconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else { throw StorageError.io(path: "control connect", errno: errno) }
        let tag = String(UInt64.random(in: 1...UInt64.max), radix: 36)
        let bytes = Array("@\(tag) \(line)\n".utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw StorageError.io(path: "control write", errno: errno) }
            sent += n
        }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !reply.contains(10) {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw ControlError.noReply(command: line, seconds: controlReplySeconds)
            }
            if n <= 0 { break }
            reply += chunk[0..<n]
        }
        return try Self.checkedReply(reply, to: line, tag: tag)
    }

    /// The reply to a control command when it is refgw's JSON object with `"ok": true` and the command's tag.
    private static func checkedReply(_ bytes: [UInt8], to command: String, tag: String) throws(ControlError) -> JSONValue {
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let reply = JSONValue.parse(bytes), let ok = reply["ok"]?.boolValue else {
            throw .malformedReply(command: command, reply: text)
        }
        guard reply["controlId"]?.stringValue == tag else { throw .mismatchedReply(command: command, reply: text) }
        guard ok else { throw .refused(command: command, reason: reply["error"]?.stringValue ?? text) }
        return reply
    }

    /// Freezes (SIGSTOP) or thaws (SIGCONT) the process: a Gateway that stops answering without closing its sockets.
    package func freeze(_ frozen: Bool) {
        if process.isRunning { kill(process.processIdentifier, frozen ? SIGSTOP : SIGCONT) }
    }

    /// Kills the process and waits for the kernel to have ended it (gone, or a zombie: its sockets are closed and
    /// its port is free); safe to call more than once. No `waitUntilExit`: it spins on the calling thread until
    /// Foundation notices the exit, and it is called from tests' `defer`s on the cooperative pool (two threads
    /// here): two such waits at once stopped every other test (seen with PeerProcess, 8600811). SIGKILL makes the
    /// wait milliseconds; the bound only catches the impossible. Reaping stays Foundation's.
    package func stop() {
        let pid = process.processIdentifier
        guard pid > 0, process.isRunning else { return }
        kill(pid, SIGKILL)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, Self.isRunning(pid) { usleep(1_000) }
    }

    /// Whether `pid` still runs (a zombie has ended: only its exit status is left).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    deinit { stop() }
}
