import Foundation
import Glibc
import TalkBench
import TalkService
import TalkTestSupport
import Testing

@testable import SessionBridge

/// The built daemon as a user runs it: set up against a reference Gateway (ws://, approves pairing), then
/// `start`ed detached in a private home (config, state and runtime folders of its own). Files stand in for the
/// microphone and the speaker unless a test asks for PulseAudio.
struct DaemonHarness: Sendable {
    static let token = "daemon-test-token"
    /// The private PulseAudio of scripts/with-pulse.sh (make test runs every suite inside it).
    static let pulse = TestInput(name: "a PulseAudio server (PULSE_SERVER)", remedy: "run the tests inside scripts/with-pulse.sh") {
        TestInputs.environment["PULSE_SERVER"]
    }

    let gateway: ReferenceGatewayProcess
    let command: BuiltCommand
    let paths: RuntimePaths

    /// A daemon home, set up against a fresh Gateway (started with `gatewayArguments` too); `config` is written as
    /// config.json first.
    static func make(config: [String: Any]? = nil, environment: [String: String] = [:],
                     gatewayArguments: [String] = []) async throws -> DaemonHarness {
        let gateway = try await offPool {
            try ReferenceGatewayProcess(repositoryRoot: TestInputs.packageRoot, arguments: ["--token", token, "--auto-approve"] + gatewayArguments)
        }
        var command = try BuiltCommand()
        command.extraEnvironment = environment
        let paths = RuntimePaths(runtimeDirectory: command.runtimeFolder + "/openclaw-talk", stateDirectory: command.stateFolder,
                                 configDirectory: command.configFolder)
        let harness = DaemonHarness(gateway: gateway, command: command, paths: paths)
        if let config { try harness.writeConfig(config) }
        let setup = try await command.run(["setup", "--gateway", gateway.startup.url, "--token", token])
        try #require(setup.status == 0, "setup: \(setup.stderr)")
        return harness
    }

    func writeConfig(_ config: [String: Any]) throws {
        try FileManager.default.createDirectory(atPath: paths.configDirectory, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: paths.configPath))
    }

    /// File devices: a second of silence as the microphone (then endless silence), a WAV as the speaker.
    var fileDevices: [String] {
        get throws {
            let input = command.home + "/silence.wav"
            if !FileManager.default.fileExists(atPath: input) { try Self.silence(seconds: 1).write(to: URL(fileURLWithPath: input)) }
            return ["--input", input, "--output", command.home + "/spoken.wav"]
        }
    }

    func run(_ arguments: [String], timeout: Duration = .seconds(120)) async throws -> BuiltCommand.Outcome {
        try await command.start(arguments).finish(timeout: timeout)
    }

    /// `start` with these run options; returns the daemon's pid (the test fails when it does not start).
    func start(_ options: [String]) async throws -> Int32 {
        let r = try await run(["start"] + options)
        try #require(r.status == 0, "start: \(r.stdout) \(r.stderr)\nlog: \(log)")
        let pid = r.stdout.split(separator: "pid ").dropFirst().first?.prefix { $0.isNumber }
        return try #require(pid.flatMap { Int32($0) }, "start printed: \(r.stdout)")
    }

    /// The daemon's status over its socket (nil when none answers).
    func status() async throws -> ServiceStatus? {
        let socket = paths.socketPath
        return try await offPool {
            guard let value = try? ControlClient(path: socket).call("status").outcome.get() else { return nil }
            return try JSONDecoder.serviceDecoder.decode(ServiceStatus.self, from: JSONEncoder().encode(value))
        }
    }

    func call(_ cmd: String, _ args: [String: ControlJSON] = [:]) async throws -> ControlResponse {
        let socket = paths.socketPath
        return try await offPool { try ControlClient(path: socket).call(cmd, args: args) }
    }

    /// Polls until `check` holds (bounded); false when it did not.
    func eventually(_ timeout: Duration = .seconds(30), _ check: @Sendable () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await check() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return try await check()
    }

    var log: String { (try? String(contentsOfFile: paths.logPath, encoding: .utf8)) ?? "(no log)" }

    /// Ends whatever daemon this home still runs, then the Gateway and the folders.
    func tearDown() {
        if let pid = InstanceLock.holder(path: paths.lockPath) { kill(pid, SIGKILL) }
        gateway.stop()
        command.removeHome()
    }

    static func alive(_ pid: Int32) -> Bool { StatusReading.processExists(pid) }

    /// Our capture streams in PulseAudio (`pactl list source-outputs`) belonging to `pid`.
    static func captureStreams(of pid: Int32) async throws -> Int {
        let (_, text) = try await ChildProcess.output("/usr/bin/pactl", ["list", "source-outputs"], environment: TestInputs.environment)
        return text.components(separatedBy: "Source Output #").filter { $0.contains("application.process.id = \"\(pid)\"") }.count
    }

    /// A 16 kHz mono PCM16 WAV of silence.
    static func silence(seconds: Double) -> Data {
        let samples = Int(seconds * 16_000)
        var data = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); u32(UInt32(36 + samples * 2)); data.append(contentsOf: Array("WAVEfmt ".utf8))
        u32(16); u16(1); u16(1); u32(16_000); u32(32_000); u16(2); u16(16)
        data.append(contentsOf: Array("data".utf8)); u32(UInt32(samples * 2))
        data.append(Data(count: samples * 2))
        return data
    }
}

extension ControlResponse {
    var succeeded: Bool { if case .success = outcome { true } else { false } }
}
