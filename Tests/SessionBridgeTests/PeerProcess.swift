import Foundation
import Synchronization

/// The Python WebSocket peer (`Peers/ws_echo_peer.py`) as a child process: started on port 0, its port,
/// certificate path and fingerprint read from its first stdout line; later lines are events it reports.
/// Its stdin is a pipe we hold: when the test process ends for any reason, the peer sees EOF and exits.
final class PeerProcess: Sendable {
    struct Info: Decodable, Sendable {
        let port: Int
        let fingerprint: String?
        let cert: String?
    }

    let info: Info
    private let process: Process
    private let stdinPipe: Pipe
    private let lines: LineLog

    /// Lines the peer printed, shared with the pipe's reading thread.
    final class LineLog: Sendable {
        private let state = Mutex<(lines: [String], partial: String)>(([], ""))

        func append(_ data: Data) {
            state.withLock { state in
                state.partial += String(decoding: data, as: UTF8.self)
                while let newline = state.partial.firstIndex(of: "\n") {
                    state.lines.append(String(state.partial[..<newline]))
                    state.partial = String(state.partial[state.partial.index(after: newline)...])
                }
            }
        }

        var first: String? { state.withLock { $0.lines.first } }

        func first(startingWith prefix: String) -> String? {
            state.withLock { $0.lines.dropFirst().first { $0.hasPrefix(prefix) } }
        }
    }

    enum StartError: Error, CustomStringConvertible {
        case noPortLine(String)
        var description: String {
            switch self { case .noPortLine(let output): "the peer did not report its port: \(output)" }
        }
    }

    private init(info: Info, process: Process, stdinPipe: Pipe, lines: LineLog) {
        self.info = info
        self.process = process
        self.stdinPipe = stdinPipe
        self.lines = lines
    }

    /// Starts the peer with `arguments` (e.g. `["--raw"]`, `["--tls"]`) and waits for its port without
    /// blocking a cooperative thread (tests run in parallel on a pool as small as the core count).
    static func start(_ arguments: [String] = []) async throws -> PeerProcess {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Peers/ws_echo_peer.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        let lines = LineLog()
        stdoutPipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                return
            }
            lines.append(data)
        }
        try process.run()
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let first = lines.first, let info = try? JSONDecoder().decode(Info.self, from: Data(first.utf8)) {
                return PeerProcess(info: info, process: process, stdinPipe: stdinPipe, lines: lines)
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        process.terminate()
        throw StartError.noPortLine(lines.first ?? "")
    }

    var port: Int { info.port }

    /// Waits (bounded) for a reported line starting with `prefix`; returns it, or `nil` after `timeout`.
    /// It always looks at least once, so `timeout: .zero` asks "was it reported already?".
    func waitForLine(startingWith prefix: String, timeout: Duration = .seconds(5)) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = lines.first(startingWith: prefix) { return line }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Ends the peer. Safe to call more than once. SIGKILL, as a peer started from a thread that blocks SIGTERM
    /// inherits it blocked, and no wait: `waitUntilExit` spins on the calling thread (a cooperative one, from a
    /// test's `defer`) until Foundation notices the exit, and once it never did: the thread spun at 100 % and
    /// pass 1 stopped dead at 30 s until its 900 s limit (TLSConnectionTests "a trusted certificate for another
    /// host name is refused"). Instead it waits for the kernel to have ended the peer (gone, or a zombie: its
    /// sockets are closed, which "connecting to a closed port" needs), which SIGKILL makes a matter of
    /// milliseconds; the bound only catches the impossible. Reaping stays Foundation's.
    func stop() {
        try? stdinPipe.fileHandleForWriting.close()
        let pid = process.processIdentifier
        guard pid > 0, process.isRunning else { return }
        kill(pid, SIGKILL)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, Self.isAlive(pid) { usleep(2_000) }
    }

    /// Whether `pid` still runs (a zombie has ended: only its exit status is left).
    private static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    deinit { stop() }
}

extension PeerProcess {
    /// `route` with a random query tag, so tests sharing a peer find their own reported lines.
    static func tagged(_ route: String) -> String {
        let tag = String(UInt32.random(in: .min ... .max), radix: 16)
        return route + (route.contains("?") ? "&" : "?") + "t=" + tag
    }
}

/// One peer process of a kind for the whole test run, started on first use. It ends with the test
/// process: its stdin closes and it exits.
actor SharedPeer {
    static let websockets = SharedPeer([])
    static let raw = SharedPeer(["--raw"])
    static let tls = SharedPeer(["--tls"])
    static let rawTLS = SharedPeer(["--raw", "--tls"])

    private let arguments: [String]
    private var starting: Task<PeerProcess, any Error>?

    private init(_ arguments: [String]) { self.arguments = arguments }

    /// The running peer.
    func get() async throws -> PeerProcess {
        if let starting { return try await starting.value }
        let arguments = arguments
        let task = Task { try await PeerProcess.start(arguments) }
        starting = task
        return try await task.value
    }
}
