import Foundation
import TalkTestSupport

/// A headless PulseAudio of one test's own, set up as `scripts/with-pulse.sh` does (null sink `vsink` at 16 kHz
/// mono, `vmic` remapping its monitor, so what is played into vsink comes back on vmic as a loudspeaker's sound
/// reaches a microphone), so no other suite's sound can reach the session under test. `launcher` runs the built
/// binary against it; `play` and `record` use pulseaudio-utils. Blocking waits run off the cooperative pool.
final class PrivatePulse: Sendable {
    let directory: String
    let address: String
    /// A script that runs its arguments with PULSE_SERVER set to this server (for `BuiltCommand(through:)`).
    let launcher: String
    private let server: Process

    static let utilities = TestInput(name: "pulseaudio and pulseaudio-utils", remedy: "apt-get install pulseaudio pulseaudio-utils") {
        ["/usr/bin/pulseaudio", "/usr/bin/pactl", "/usr/bin/paplay", "/usr/bin/parec"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        } ? "/usr/bin/pulseaudio" : nil
    }

    private init(directory: String) throws {
        self.directory = directory
        address = "unix:\(directory)/pulse.sock"
        launcher = directory + "/with-this-pulse.sh"
        try "#!/bin/sh\nPULSE_SERVER='\(address)' exec \"$@\"\n".write(toFile: launcher, atomically: true, encoding: .utf8)
        chmod(launcher, 0o700)
        for sub in ["runtime", "home"] {
            try FileManager.default.createDirectory(atPath: "\(directory)/\(sub)", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        server = Process()
        server.executableURL = URL(fileURLWithPath: try Self.utilities.path())
        server.arguments = [
            // It exits 5 minutes after its last client, so a crashed test leaves nothing running for ever.
            "--daemonize=no", "--exit-idle-time=300", "-n", "--disallow-exit", "--use-pid-file=no", "--log-target=stderr", "--log-level=error",
            "--load=module-native-protocol-unix auth-anonymous=1 socket=\(directory)/pulse.sock",
            "--load=module-null-sink sink_name=vsink rate=16000 channels=1",
            "--load=module-remap-source master=vsink.monitor source_name=vmic",
            "--load=module-always-sink",
        ]
        var environment = TestInputs.environment
        environment["XDG_RUNTIME_DIR"] = directory + "/runtime"
        environment["HOME"] = directory + "/home"
        environment["PULSE_SERVER"] = nil
        server.environment = environment
        server.standardOutput = FileHandle.nullDevice
        FileManager.default.createFile(atPath: directory + "/pulse.log", contents: nil)
        server.standardError = FileHandle(forWritingAtPath: directory + "/pulse.log")
    }

    /// Starts a server, runs `body`, then stops the server and removes its folder whatever happened.
    static func with<T>(_ body: (PrivatePulse) async throws -> T) async throws -> T {
        var template = Array((NSTemporaryDirectory() + "oct-pulse-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CommandFailure("mkdtemp failed: errno \(errno)") }
        let pulse = try PrivatePulse(directory: String(cString: made))
        defer { pulse.stop() }
        try await offPool { try pulse.startBlocking() }
        return try await body(pulse)
    }

    private func startBlocking() throws {
        try server.run()
        for _ in 0..<400 {
            if (try? run("/usr/bin/pactl", ["info"]).status) == 0 { return }
            usleep(25_000)
        }
        let log = (try? String(contentsOfFile: directory + "/pulse.log", encoding: .utf8)) ?? ""
        throw CommandFailure("the private PulseAudio did not answer within 10 s at \(address): \(log)")
    }

    private func stop() {
        if server.isRunning {
            server.terminate()
            server.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Plays 16 kHz mono PCM16 into vsink (as a person speaking near the microphone would be heard) and
    /// returns when it has been played.
    func play(_ samples: [Int16]) async throws {
        let path = directory + "/play-\(UUID().uuidString).raw"
        try samples.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (status, output) = try await offPool {
            try self.run("/usr/bin/paplay", ["--raw", "--rate=16000", "--channels=1", "--format=s16le", "--device=vsink", path])
        }
        guard status == 0 else { throw CommandFailure("paplay exited with \(status): \(output)") }
    }

    /// Runs `pactl` against this server; its stdout.
    @discardableResult
    func pactl(_ arguments: [String]) async throws -> String {
        let (status, output) = try await offPool { try self.run("/usr/bin/pactl", arguments) }
        guard status == 0 else { throw CommandFailure("pactl \(arguments.joined(separator: " ")) exited with \(status): \(output)") }
        return output
    }

    /// Records what vsink plays (its monitor) from now until `finish()`.
    func record() throws -> Recording {
        try Recording(address: address, path: directory + "/recorded-\(UUID().uuidString).raw")
    }

    final class Recording: @unchecked Sendable {
        private let process = Process()
        private let path: String

        fileprivate init(address: String, path: String) throws {
            self.path = path
            FileManager.default.createFile(atPath: path, contents: nil)
            guard let file = FileHandle(forWritingAtPath: path) else { throw CommandFailure("cannot create \(path)") }
            process.executableURL = URL(fileURLWithPath: "/usr/bin/parec")
            process.arguments = ["--server=\(address)", "--device=vsink.monitor", "--raw", "--rate=16000", "--channels=1",
                                 "--format=s16le", "--latency-msec=20"]
            process.standardOutput = file
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// Stops recording; the samples recorded.
        func finish() async throws -> [Int16] {
            process.terminate()
            try await offPool { self.process.waitUntilExit() }
            let data = FileManager.default.contents(atPath: path) ?? Data()
            return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        }
    }

    /// Output goes to a file, not a pipe: a pipe's write end inherited by a child spawned meanwhile (another
    /// test's) would keep the read from ever ending.
    private func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let path = directory + "/out-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: path, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard let file = FileHandle(forWritingAtPath: path) else { throw CommandFailure("cannot create \(path)") }
        defer { try? file.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["--server=\(address)"] + arguments
        process.standardOutput = file
        process.standardError = file
        try process.run()
        process.waitUntilExit()
        let output = FileManager.default.contents(atPath: path) ?? Data()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
