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

    /// Lines the peer reported after its first, shared with the pipe's reading thread.
    final class LineLog: Sendable {
        let lines = Mutex<[String]>([])
    }

    enum StartError: Error, CustomStringConvertible {
        case noPortLine(String)
        var description: String {
            switch self { case .noPortLine(let output): "the peer did not report its port: \(output)" }
        }
    }

    /// Starts the peer with `arguments` (e.g. `["--raw"]`, `["--tls"]`) and waits for its port.
    init(_ arguments: [String] = []) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Peers/ws_echo_peer.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        try process.run()
        self.process = process
        self.stdinPipe = stdinPipe
        let lines = LineLog()
        self.lines = lines

        // First line: the JSON with the port. Read it synchronously (bounded by the peer's start-up).
        var firstLine = Data()
        let handle = stdoutPipe.fileHandleForReading
        while let byte = try handle.read(upToCount: 1), !byte.isEmpty, byte != Data([10]) {
            firstLine.append(byte)
        }
        guard let info = try? JSONDecoder().decode(Info.self, from: firstLine) else {
            process.terminate()
            throw StartError.noPortLine(String(decoding: firstLine, as: UTF8.self))
        }
        self.info = info
        handle.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                return
            }
            let text = String(decoding: data, as: UTF8.self)
            lines.lines.withLock { $0.append(contentsOf: text.split(separator: "\n").map(String.init)) }
        }
    }

    var port: Int { info.port }

    /// Waits (bounded) for a reported line starting with `prefix`; returns it, or `nil` after `timeout`.
    func waitForLine(startingWith prefix: String, timeout: Duration = .seconds(5)) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = lines.lines.withLock({ $0.first { $0.hasPrefix(prefix) } }) { return line }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Ends the peer. Safe to call more than once.
    func stop() {
        try? stdinPipe.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit { stop() }
}
