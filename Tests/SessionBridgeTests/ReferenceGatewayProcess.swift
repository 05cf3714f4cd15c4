import Foundation
import Glibc

@testable import SessionBridge

/// The reference Gateway (`tools/reference-gateway/refgw.py`) as a child process: started on free
/// ports, its startup JSON read from the first stdout line, driven through its control port, and
/// killed when the value goes away (or on `stop()`), whatever path the test takes.
final class ReferenceGatewayProcess: Sendable {
    struct Startup: Decodable, Sendable {
        let url: String
        let port: Int
        let tls: Bool
        let tlsFingerprint: String?
        let controlPort: Int
        let version: String
        let schema: String?
        let setupCode: String?
        let bootstrapToken: String?
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    let startup: Startup
    private let process: Process

    enum StartError: Error, CustomStringConvertible {
        case noStartupLine(String)
        var description: String {
            switch self { case .noStartupLine(let s): "refgw did not print its startup JSON: \(s.prefix(400))" }
        }
    }

    init(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "tools/reference-gateway/refgw.py", "--quiet"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: Self.packageRoot)
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        var line = Data()
        let handle = out.fileHandleForReading
        while let byte = try handle.read(upToCount: 1), !byte.isEmpty, byte != Data([10]) { line.append(byte) }
        guard let startup = try? JSONDecoder().decode(Startup.self, from: line) else {
            process.terminate()
            throw StartError.noStartupLine(String(decoding: line, as: UTF8.self))
        }
        self.startup = startup
    }

    var endpoint: GatewayEndpoint { get throws { try GatewayEndpoint(parsing: startup.url) } }

    /// Sends one control command and returns its JSON reply.
    @discardableResult
    func control(_ line: String) throws -> JSONValue {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw StorageError.io(path: "control socket", errno: errno) }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(startup.controlPort).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else { throw StorageError.io(path: "control connect", errno: errno) }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !reply.contains(10) {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            reply += chunk[0..<n]
        }
        return JSONValue.parse(reply) ?? .null
    }

    /// Schema violations recorded so far, or nil (with a SKIPPED line) when refgw runs without the schema.
    func violations() throws -> [JSONValue]? {
        guard startup.schema != nil else {
            print("SKIPPED: ../shared not found: the schema check of sent frames was not run")
            return nil
        }
        return try control("violations")["violations"]?.arrayValue ?? []
    }

    /// Approves every pending pairing request once one exists (bounded wait).
    func approveWhenPending(timeout: Duration = .seconds(5)) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let pending = try control("pending")["pending"]?.arrayValue ?? []
            if !pending.isEmpty { return try control("approve")["approved"]?.stringArray ?? [] }
            try await Task.sleep(for: .milliseconds(20))
        }
        return []
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    deinit { stop() }
}
