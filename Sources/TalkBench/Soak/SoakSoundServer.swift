import Foundation
import Synchronization

/// `bench soak`'s private, headless sound server, which it kills and starts again: PulseAudio (as
/// scripts/with-pulse.sh starts it) or PipeWire (scripts/pipewire-headless.sh from the checkout). Both get the same
/// devices: the null sink `vsink` whose monitor is remapped as the virtual microphone `vmic` (what the benchmark
/// plays into vsink, the daemon hears on vmic), and a second null sink `speaker` for the replies, so the daemon
/// never hears itself.
final class SoakSoundServer: @unchecked Sendable {
    let kind: SoundServerKind
    let folder: String
    private let repository: String
    private var pid: pid_t?
    /// `halt()` was called: nothing starts any more.
    private let halted = Atomic<Bool>(false)

    /// How long a server may take to answer after it starts: a hang bound (a loaded 2-core machine takes seconds).
    static let startBound: Duration = .seconds(60)

    init(kind: SoundServerKind, folder: String, repository: String) throws {
        self.kind = kind
        self.folder = folder
        self.repository = repository
        for sub in ["", "/runtime", "/home"] {
            try FileManager.default.createDirectory(
                atPath: folder + sub, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }

    /// What a Pulse client (the daemon, pactl, paplay) needs to find this server.
    var pulseServer: String {
        kind == .pulse ? "unix:\(folder)/pulse.sock" : "unix:\(folder)/runtime/pulse/native"
    }

    /// Starts the server and waits until it answers with the microphone there.
    func start() async throws {
        var environment = ProcessInfo.processInfo.environment
        for name in ["PULSE_SERVER", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "NOTIFY_SOCKET"] {
            environment[name] = nil
        }
        let path: String
        let arguments: [String]
        switch kind {
        case .pulse:
            environment["XDG_RUNTIME_DIR"] = folder + "/runtime"
            environment["HOME"] = folder + "/home"
            path = "/usr/bin/pulseaudio"
            arguments = [
                "--daemonize=no", "--exit-idle-time=-1", "-n", "--disallow-exit", "--use-pid-file=no", "--log-target=stderr",
                "--log-level=error",
                "--load=module-native-protocol-unix auth-anonymous=1 socket=\(folder)/pulse.sock",
                "--load=module-null-sink sink_name=vsink rate=16000 channels=1",
                "--load=module-remap-source master=vsink.monitor source_name=vmic",
                "--load=module-null-sink sink_name=speaker rate=16000 channels=1",
                "--load=module-always-sink",
            ]
        case .pipewire:
            let script = repository + "/scripts/pipewire-headless.sh"
            guard FileManager.default.fileExists(atPath: script) else {
                throw BenchSoakError.part("bench soak --server pipewire needs \(script): run it from the openclaw-talk source folder")
            }
            path = "/bin/bash"
            arguments = [script, folder, "\(getpid())"]
        }
        guard !halted.load(ordering: .acquiring) else { throw BenchSoakError.part("bench soak is stopping: the sound server is not started again") }
        // It dies with the soak, however the soak ends: PulseAudio at once; the PipeWire script on SIGTERM, which it
        // traps to kill its three servers (SIGKILL would leave them running).
        let (death, logPath) = (kind == .pulse ? ChildSpawn.ParentDeathSignal.kill : .term, folder + "/server.log")
        let pid = try await ChildSpawn.onSpawnThread { [environment] in
            try ChildSpawn.spawn(path, arguments, environment: environment, outputPath: logPath, parentDeathSignal: death)
        }
        self.pid = pid
        // A halt that came during the spawn found no pid to kill: this start kills what it started.
        guard !halted.load(ordering: .acquiring) else {
            await kill()
            throw BenchSoakError.part("bench soak is stopping: the sound server just started was stopped")
        }
        let deadline = ContinuousClock.now + Self.startBound
        while ContinuousClock.now < deadline {
            if let status = ChildSpawn.exited(pid) {
                self.pid = nil
                throw BenchSoakError.part("the \(kind.rawValue) server exited at start (\(status)): \(log)")
            }
            if await ready() {
                if kind == .pipewire { _ = await pactl(["load-module", "module-null-sink", "sink_name=speaker", "rate=16000", "channels=1"]) }
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchSoakError.part("the \(kind.rawValue) server did not answer within \(Self.startBound): \(log)")
    }

    /// The server answers and the virtual microphone is there.
    func ready() async -> Bool {
        let (status, out) = await pactl(["list", "short", "sources"])
        return status == 0 && out.split(separator: "\n").contains { $0.split(separator: "\t").dropFirst().first == "vmic" }
    }

    /// Kills the server as a crash would (SIGKILL, every process of it; PipeWire's script kills its three when it
    /// sees the stop file, and cannot when it is SIGKILLed itself).
    func kill() async {
        guard let pid else { return }
        if kind == .pipewire {
            _ = FileManager.default.createFile(atPath: folder + "/stop", contents: nil)
            for _ in 0..<200 where ChildSpawn.exited(pid) == nil { try? await Task.sleep(for: .milliseconds(25)) }
        }
        Glibc.kill(pid, SIGKILL)
        while ChildSpawn.exited(pid) == nil { try? await Task.sleep(for: .milliseconds(10)) }
        self.pid = nil
    }

    /// Removes the virtual microphone (a USB headset unplugged); `returnMicrophone()` puts it back.
    func removeMicrophone() async throws {
        let (_, modules) = await pactl(["list", "short", "modules"])
        guard let line = modules.split(separator: "\n").first(where: { $0.contains("source_name=vmic") }),
              let id = line.split(separator: "\t").first else { throw BenchSoakError.part("no module holds vmic: \(modules)") }
        let (status, out) = await pactl(["unload-module", String(id)])
        guard status == 0 else { throw BenchSoakError.part("pactl unload-module \(id) failed: \(out)") }
    }

    func returnMicrophone() async throws {
        let (status, out) = await pactl(["load-module", "module-remap-source", "master=vsink.monitor", "source_name=vmic"])
        guard status == 0 else { throw BenchSoakError.part("pactl load-module module-remap-source failed: \(out)") }
    }

    /// Plays 16 kHz mono s16le `file` into vsink; false when the server is not there to play it.
    func play(_ file: String) async -> Bool {
        await SoakTool.run("/usr/bin/paplay", ["--device=vsink", "--raw", "--rate=16000", "--channels=1", "--format=s16le", file],
                           environment: ["PULSE_SERVER": pulseServer]).status == 0
    }

    func pactl(_ arguments: [String]) async -> (status: Int32, output: String) {
        await SoakTool.run("/usr/bin/pactl", arguments, environment: ["PULSE_SERVER": pulseServer])
    }

    func stop() async { await kill() }

    /// For good: kills the server, and no start after this one starts it again.
    func halt() async {
        halted.store(true, ordering: .releasing)
        await kill()
    }

    private var log: String {
        let text = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
        return text.isEmpty ? "(no log)" : String(text.suffix(1500))
    }
}

/// A short tool (pactl, paplay) run without blocking the cooperative pool: its end is awaited, its output read
/// from a file afterwards (no pipe to fill).
enum SoakTool {
    static func run(_ path: String, _ arguments: [String], environment extra: [String: String] = [:]) async -> (status: Int32, output: String) {
        let out = NSTemporaryDirectory() + "openclaw-talk-soak-\(UUID().uuidString.prefix(12))"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let pid: pid_t
        do {
            pid = try ChildSpawn.spawn(path, arguments, environment: ProcessInfo.processInfo.environment.merging(extra) { $1 }, outputPath: out)
        } catch { return (-1, "\(error)") }
        var status: Int32?
        while true {
            status = ChildSpawn.exited(pid)
            if status != nil { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return (status ?? -1, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }
}
