import ChildProcessSpawn
import Foundation
import Synchronization
import TalkTestSupport

/// A headless Pulse server of one test's own, set up as `scripts/with-pulse.sh` does (null sink `vsink` at 16 kHz
/// mono, `vmic` remapping its monitor, so what is played into vsink comes back on vmic as a loudspeaker's sound
/// reaches a microphone), so no other suite's sound can reach the session under test: PulseAudio, or under
/// `scripts/with-pipewire.sh` (`SoundServer.current == .pipewire`) a headless PipeWire with its Pulse server
/// (`PipeWireLauncher`), as most desktops have it. `launcher` runs the built binary against it; `play` and
/// `record` use pulseaudio-utils. Blocking waits run off the cooperative pool.
final class PrivatePulse: Sendable {
    let directory: String
    let address: String
    let kind = SoundServer.current
    /// A script that runs its arguments with PULSE_SERVER set to this server (for `BuiltCommand(through:)`).
    let launcher: String
    private let microphone: Microphone
    private let serverArguments: [String]
    private let serverPID = Mutex<pid_t?>(nil)

    /// The sound server's programs (each in the Debian package of its name).
    private static let serverPrograms = SoundServer.current == .pipewire ? ["pipewire", "wireplumber", "pipewire-pulse"] : ["pulseaudio"]

    static let utilities = TestInput(
        name: serverPrograms.joined(separator: ", ") + " and pulseaudio-utils",
        remedy: "apt-get install " + (serverPrograms + ["pulseaudio-utils"]).joined(separator: " ")
    ) {
        (serverPrograms + ["pactl", "paplay", "parec"]).allSatisfy {
            FileManager.default.isExecutableFile(atPath: "/usr/bin/" + $0)
        } ? "/usr/bin/" + serverPrograms[0] : nil
    }

    /// Where `vmic` takes its sound from.
    enum Microphone: Sendable {
        /// vsink's monitor: what is played into vsink is heard on vmic, a loudspeaker reaching a microphone.
        case hearsSpeaker
        /// The monitor of a null sink of its own (`micsink`), so vmic and vsink run on two audio threads, as a real
        /// microphone and speaker do. PulseAudio 16.1's module-echo-cancel deadlocks now and then when both its
        /// masters are driven by one null sink's thread (load/unload of the module alone, no client stream: 3 of 3
        /// loops of 25 hung; with the masters on two null sinks 50 of 50 were clean), so tests of start-up and
        /// shutdown with `--aec pulse` that need no echo use this.
        case ownSink
    }

    private init(directory: String, microphone: Microphone) throws {
        self.directory = directory
        self.microphone = microphone
        address = kind == .pipewire ? PipeWireLauncher.address(in: directory) : "unix:\(directory)/pulse.sock"
        launcher = directory + "/with-this-pulse.sh"
        // Written through a close-on-exec descriptor: a child another test forks meanwhile would otherwise hold it open
        // for writing, and running the script then fails with "Text file busy" (seen with two suites at once).
        let script = Array("#!/bin/sh\nPULSE_SERVER='\(address)' exec \"$@\"\n".utf8)
        let fd = open(launcher, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o700)
        guard fd >= 0 else { throw CommandFailure("cannot create \(launcher): errno \(errno)") }
        let written = script.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == script.count else { throw CommandFailure("cannot write \(launcher)") }
        for sub in ["runtime", "home"] {
            try FileManager.default.createDirectory(atPath: "\(directory)/\(sub)", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        serverArguments = [
            // It exits 5 minutes after its last client, so a crashed test leaves nothing running for ever.
            // No shared memory: PulseAudio 16's memfd import aborts the server under load (scripts/with-pulse.sh).
            "--daemonize=no", "--exit-idle-time=300", "-n", "--disallow-exit", "--use-pid-file=no", "--disable-shm=yes",
            "--log-target=stderr", "--log-level=error",
            "--load=module-native-protocol-unix auth-anonymous=1 socket=\(directory)/pulse.sock",
            "--load=module-null-sink sink_name=vsink rate=16000 channels=1",
        ] + (microphone == .hearsSpeaker ? [] : ["--load=module-null-sink sink_name=micsink rate=16000 channels=1"]) + [
            "--load=module-remap-source master=\(microphone == .hearsSpeaker ? "vsink" : "micsink").monitor source_name=vmic",
            "--load=module-always-sink",
        ]
    }

    /// Starts a server, runs `body`, then stops the server and removes its folder whatever happened.
    static func with<T>(microphone: Microphone = .hearsSpeaker, _ body: (PrivatePulse) async throws -> T) async throws -> T {
        var template = Array((NSTemporaryDirectory() + "oct-pulse-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CommandFailure("mkdtemp failed: errno \(errno)") }
        let pulse = try PrivatePulse(directory: String(cString: made), microphone: microphone)
        defer { pulse.stop() }
        try await offPool { try pulse.startBlocking() }
        return try await body(pulse)
    }

    private func startBlocking() throws {
        _ = try Self.utilities.path()
        let pid = try kind == .pipewire
            ? PipeWireLauncher.start(in: directory, environment: TestInputs.environment)
            : PulseAudioLauncher.start(serverArguments, in: directory, environment: TestInputs.environment)
        serverPID.withLock { $0 = pid }
        // The server that answers is the one the pass asked for: pipewire-pulse calls itself "PulseAudio (on PipeWire x.y)".
        let name = try pactlBlocking(["info"]).split(separator: "\n").first { $0.hasPrefix("Server Name:") } ?? "(no name)"
        guard name.contains("PipeWire") == (kind == .pipewire) else {
            throw CommandFailure("a \(kind.rawValue) test server was asked for, and \(name) answers")
        }
        if kind == .pipewire, microphone == .ownSink { try moveMicrophoneToOwnSink() }
    }

    /// PipeWire's Pulse server loads vmic on vsink's monitor at its start: vmic is made again on micsink's.
    private func moveMicrophoneToOwnSink() throws {
        let modules = try pactlBlocking(["list", "short", "modules"]).split(separator: "\n")
        guard let remap = modules.first(where: { $0.contains("module-remap-source") && $0.contains("source_name=vmic") }) else {
            throw CommandFailure("no module makes vmic: \(modules)")
        }
        try pactlBlocking(["unload-module", String(remap.prefix { $0 != "\t" })])
        try pactlBlocking(["load-module", "module-null-sink", "sink_name=micsink", "rate=16000", "channels=1"])
        try pactlBlocking(["load-module", "module-remap-source", "master=micsink.monitor", "source_name=vmic", "channels=1"])
    }

    /// A PulseAudio deadlocked in module-echo-cancel does not answer SIGTERM: SIGKILL. PipeWire's script SIGKILLs
    /// its three processes when told to stop.
    private func stop() {
        if let pid = serverPID.withLock({ p in defer { p = nil }; return p }) {
            if kind == .pipewire {
                PipeWireLauncher.stop(pid, in: directory)
            } else {
                kill(pid, SIGKILL)
                Spawned.wait(pid)
            }
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
        try await offPool { try self.pactlBlocking(arguments) }
    }

    @discardableResult
    private func pactlBlocking(_ arguments: [String]) throws -> String {
        let (status, output) = try run("/usr/bin/pactl", arguments)
        guard status == 0 else { throw CommandFailure("pactl \(arguments.joined(separator: " ")) exited with \(status): \(output)") }
        return output
    }

    /// Records what vsink plays (its monitor) from now until `finish()`.
    func record() throws -> Recording {
        try Recording(address: address, path: directory + "/recorded-\(UUID().uuidString).raw")
    }

    /// parec runs as a Foundation `Process`, as the built binary does: spawned by hand it shifted the replies of
    /// the reference Gateway's control socket by one (an inherited descriptor, most likely).
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

        /// Stops recording (SIGKILL: raw PCM needs no closing, and the test process blocks SIGTERM for its
        /// children); the samples recorded.
        func finish() async throws -> [Int16] {
            kill(process.processIdentifier, SIGKILL)
            let deadline = ContinuousClock.now + .seconds(10)
            while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            let data = FileManager.default.contents(atPath: path) ?? Data()
            return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        }
    }

    /// Output goes to a file, not a pipe.
    private func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let path = directory + "/out-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let pid = try Spawned.start(program, ["--server=\(address)"] + arguments, environment: TestInputs.environment, output: path)
        let status = Spawned.wait(pid)
        return (status, String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self))
    }
}

/// posix_spawn and waitpid. Foundation's `Process` is not used for the server and its tools: on Linux its
/// monitor blocks in `wait4` on a long-lived child (the server) and then never reaps a short one (pactl), as
/// AudioIOTests' `ChildProcess` notes.
private enum Spawned {
    /// Starts `path`; stdout and stderr go to the file at `output` (created), stdin is /dev/null.
    static func start(_ path: String, _ arguments: [String], environment: [String: String], output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        PosixSpawn.closeFrom(3, in: &actions)   // nothing of another test's reaches paplay or pactl
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        // The test process blocks and ignores signals (SIGTERM among them) that a child would inherit.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw CommandFailure("cannot start \(path): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// Waits for `pid` to end; its exit status (or 128 + signal).
    @discardableResult
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
