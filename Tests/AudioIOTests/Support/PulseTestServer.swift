import Foundation
import Synchronization
import TalkTestSupport

/// A private headless PulseAudio for one test: the same set-up as `scripts/with-pulse.sh` (null sink `vsink`
/// at 16 kHz mono, `vmic` remapping its monitor) in its own 0700 temp folder with its own socket, so a test
/// may kill and restart it. Use `PulseTestServer.with { ... }`, which stops it on every path. One difference
/// from the script: the server exits after 30 s without clients, so a test process that crashes does not
/// leave it running for ever. Starting the server and running pactl block (spawn, poll, waitpid): they run
/// off the cooperative pool, which has only as many threads as cores and is shared by every suite running
/// in parallel; blocking it stalls the timers of all the other tests.
///
/// Under `scripts/with-pipewire.sh` (`SoundServer.current == .pipewire`) it is a private headless PipeWire
/// instead: `scripts/pipewire-headless.sh` runs pipewire, wireplumber and pipewire-pulse with the same two
/// devices as start-up modules of the Pulse server; `kill()` SIGKILLs all three, and it stops them itself when
/// the test process is gone.
final class PulseTestServer: Sendable {
    /// The address to hand to the code under test.
    let address: String
    let directory: URL
    let kind = SoundServer.current
    private let pid = Mutex<pid_t?>(nil)

    private init() throws {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-talk-test.XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw TestServerError("mkdtemp failed: errno \(errno)") }
        directory = URL(fileURLWithPath: String(cString: made))
        chmod(directory.path, 0o700)
        for sub in ["runtime", "home"] {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(sub), withIntermediateDirectories: false,
                attributes: [.posixPermissions: 0o700])
        }
        address = kind == .pipewire ? PipeWireLauncher.address(in: directory.path) : "unix:" + directory.appendingPathComponent("pulse.sock").path
    }

    /// Starts a server, runs `body`, and stops the server and removes its folder whatever happens.
    static func with<T>(_ body: (PulseTestServer) async throws -> T) async throws -> T {
        let server = try PulseTestServer()
        defer { server.stop() }
        try await server.start()
        return try await body(server)
    }

    /// Starts (or restarts) the server on the same socket and waits until it is ready (PulseAudioLauncher).
    func start() async throws {
        try await offPool { try self.startBlocking() }
    }

    private func startBlocking() throws {
        if kind == .pipewire { return try startPipeWireBlocking() }
        let socket = directory.appendingPathComponent("pulse.sock").path
        let child = try PulseAudioLauncher.start(
            [
                // No shared memory: PulseAudio 16's memfd import aborts the server under load (scripts/with-pulse.sh).
                "--daemonize=no", "--exit-idle-time=30", "-n", "--disallow-exit", "--use-pid-file=no", "--disable-shm=yes",
                "--log-target=stderr", "--log-level=error",
                "--load=module-native-protocol-unix auth-anonymous=1 socket=\(socket)",
                "--load=module-null-sink sink_name=vsink rate=16000 channels=1",
                "--load=module-remap-source master=vsink.monitor source_name=vmic",
                "--load=module-always-sink",
            ], in: directory.path, environment: ProcessInfo.processInfo.environment)
        pid.withLock { $0 = child }
    }

    private func startPipeWireBlocking() throws {
        let child = try PipeWireLauncher.start(in: directory.path, environment: ProcessInfo.processInfo.environment)
        pid.withLock { $0 = child }
    }

    /// Kills the server at once (SIGKILL: no goodbye to clients, as when it crashes).
    func kill() async {
        _ = try? await offPool { self.killBlocking() }
    }

    /// SIGKILL ends the server at once, so waiting for it is short: fine on the way out of a test.
    private func killBlocking() {
        guard let pid = pid.withLock({ p in defer { p = nil }; return p }) else { return }
        if kind == .pipewire { return PipeWireLauncher.stop(pid, in: directory.path) }
        Foundation.kill(pid, SIGKILL)
        ChildProcess.wait(pid)
    }

    /// Kills the server and removes its folder.
    func stop() {
        killBlocking()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `pactl` against this server; returns its stdout, throws on a non-zero exit.
    @discardableResult
    func pactl(_ arguments: [String]) async throws -> String {
        try await offPool { try self.pactlBlocking(arguments) }
    }

    private func pactlBlocking(_ arguments: [String]) throws -> String {
        let (status, output) = try ChildProcess.run(
            "/usr/bin/pactl", ["--server", address] + arguments, environment: ProcessInfo.processInfo.environment)
        guard status == 0 else {
            throw TestServerError("pactl \(arguments.joined(separator: " ")) exited with \(status): \(output.prefix(300))")
        }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Makes the null sink render in real time now rather than up to 2 s later. Idle, it renders 2 s ahead
    /// and sleeps; a client asking for low latency is only honoured from its next wake-up, which a
    /// suspend/resume cycle brings forward. Call it once a low-latency stream (the capture) is connected.
    /// PipeWire's null sink runs with its graph in real time, and there (0.3.65) a capture of the sink's
    /// monitor hears nothing more after a suspend/resume cycle: nothing to do.
    func settleNullSink() async throws {
        guard kind == .pulseaudio else { return }
        try await pactl(["suspend-sink", "vsink", "1"])
        try await pactl(["suspend-sink", "vsink", "0"])
    }

    /// What the server says of its sinks, sources and capture streams (states, corked, latency): for a failure
    /// message when capture stalls.
    func captureState() async -> String {
        var parts: [String] = []
        for what in [["list", "short", "sinks"], ["list", "short", "sources"], ["list", "source-outputs"]] {
            let text = (try? await pactl(what)) ?? "(pactl failed)"
            parts.append(what.joined(separator: " ") + ": " + text.split(separator: "\n").map {
                $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.hasPrefix("application.") && !$0.hasPrefix("native-protocol.") && !$0.hasPrefix("module-stream-restore") }.joined(separator: "; "))
        }
        return parts.joined(separator: " | ")
    }

    /// The name of the sink the (only) playback stream plays to; nil while there is no stream.
    func sinkOfPlaybackStream() async throws -> String? {
        let inputs = try await pactl(["list", "short", "sink-inputs"])
        let sinks = try await pactl(["list", "short", "sinks"])
        let fields = { (line: Substring) in line.split(separator: "\t").map(String.init) }
        guard let input = inputs.split(separator: "\n").first.map(fields), input.count > 1 else { return nil }
        return sinks.split(separator: "\n").map(fields).first { $0.first == input[1] }.map { $0[1] }
    }

    /// Waits until the playback stream plays on `sink`: the sound is under way there, however long a busy
    /// machine took to start it. The bound only catches a stream that never gets there.
    func waitForPlaybackStream(on sink: String, upTo timeout: Duration = .seconds(10)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await sinkOfPlaybackStream() == sink { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Loads a module; returns its index for `unloadModule`.
    func loadModule(_ name: String, _ arguments: String) async throws -> String {
        try await pactl(["load-module", name] + arguments.split(separator: " ").map(String.init))
    }

    func unloadModule(_ index: String) async throws {
        try await pactl(["unload-module", index])
    }
}

struct TestServerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
