import Foundation
import Glibc
import Synchronization
import TalkService
import TalkTestSupport
import Testing

/// The built daemon (`start`, `run`) driven by its own CLI and control socket: the round trips, one daemon per
/// user, a killed daemon's lock, permissions and config errors. The walkthrough (scripts/walkthrough.py) covers
/// the Talk turns, the closed terminal and reconnect; these are the rest of the issue's list. Each daemon loads
/// the recogniser: this suite runs in `make test`'s second pass.
@Suite(.serialized) struct DaemonProcessTests {
    @Test(.requires(.builtBinary, DaemonHarness.pulse))
    func `start, status, talk start, pause, resume, talk stop and stop round-trip with the real microphone`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let pid = try await h.start(["--idle"])
        #expect(DaemonHarness.alive(pid))
        let idle = try #require(try await h.status())
        #expect(idle.pid == pid && idle.state == "idle" && idle.talk.active == false)
        #expect(try await DaemonHarness.captureStreams(of: pid) == 0, "Talk off: the microphone is closed")

        var r = try await h.run(["talk", "start"])
        #expect(r.status == 0 && r.stdout == "Talk started.\n", "\(r.stderr)")
        #expect(try await h.status()?.state == "listening")
        #expect(try await h.eventually { try await DaemonHarness.captureStreams(of: pid) == 1 }, "listening: one capture stream")

        r = try await h.run(["pause"])
        #expect(r.status == 0 && r.stdout == "Paused.\n")
        #expect(try await h.status()?.state == "paused")
        #expect(try await h.eventually { try await DaemonHarness.captureStreams(of: pid) == 0 }, "paused: nothing records")
        r = try await h.run(["resume"])
        #expect(r.status == 0 && r.stdout == "Resumed.\n")
        #expect(try await h.status()?.state == "listening")
        #expect(try await h.eventually { try await DaemonHarness.captureStreams(of: pid) == 1 }, "resumed: the stream is back")

        r = try await h.run(["status"])
        #expect(r.status == 0 && r.stdout.hasPrefix("listening, "), "\(r.stdout)")
        r = try await h.run(["talk", "stop"])
        #expect(r.status == 0)
        #expect(try await h.status()?.talk.active == false)
        #expect(try await h.eventually { try await DaemonHarness.captureStreams(of: pid) == 0 })
        // Pausing with Talk off is refused with the reason; the daemon goes on.
        r = try await h.run(["pause"])
        #expect(r.status == 1 && r.stderr.contains("Talk is off"), "\(r.stderr)")

        r = try await h.run(["stop"])
        #expect(r.status == 0 && r.stdout == "Stopping.\n")
        #expect(await h.eventually { !DaemonHarness.alive(pid) }, "the daemon exits")
        #expect(!FileManager.default.fileExists(atPath: h.paths.socketPath), "its socket is gone")
        r = try await h.run(["status"])
        #expect(r.status == 3, "\(r.stdout) \(r.stderr)")
    }

    @Test(.requires(.builtBinary))
    func `start reports the error the detached daemon stopped on`() async throws {
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let r = try await command.run(["start", "--idle"])
        #expect(r.status == 1 && r.stderr.contains("No Gateway is configured yet"), "\(r.stdout) \(r.stderr)")
        #expect(InstanceLock.holder(path: command.stateFolder + "/daemon.lock") == nil, "nothing keeps running")
    }

    @Test(.requires(.builtBinary))
    func `a second start says one is running and a run beside it refuses too`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let pid = try await h.start(["--idle"] + (try h.fileDevices))
        var r = try await h.run(["start", "--idle"])
        #expect(r.status == 1 && r.stderr.contains("already running (pid \(pid))"), "\(r.stdout) \(r.stderr)")
        r = try await h.run(["run", "--idle"] + (try h.fileDevices))
        #expect(r.status == 1 && r.stderr.contains("already running (pid \(pid))"), "\(r.stderr)")
        #expect(try await h.status()?.pid == pid, "the first daemon still serves")
    }

    @Test(.requires(.builtBinary))
    func `the lock of a daemon killed with SIGKILL is cleared by the next start`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let first = try await h.start(["--idle"] + (try h.fileDevices))
        kill(first, SIGKILL)
        #expect(await h.eventually { !DaemonHarness.alive(first) })
        var r = try await h.run(["status"])
        #expect(r.status == 3 && r.stdout.contains("not running (stale status from"), "\(r.stdout) \(r.stderr)")
        let second = try await h.start(["--idle"] + (try h.fileDevices))
        #expect(second != first)
        #expect(h.log.contains("cleared the lock of a daemon that died (pid \(first))"), "\(h.log)")
        r = try await h.run(["status", "--json"])
        let shown = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(r.status == 0 && shown?["pid"] as? Int == Int(second), "\(r.stdout)")
    }

    @Test(.requires(.builtBinary))
    func `the socket, folders, status file and log are owner-only`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        _ = try await h.start(["--idle"] + (try h.fileDevices))
        func mode(_ path: String) -> mode_t {
            var info = stat()
            return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0o7777
        }
        #expect(mode(h.paths.runtimeDirectory) == 0o700)
        #expect(mode(h.paths.stateDirectory) == 0o700)
        #expect(mode(h.paths.socketPath) == 0o600)
        #expect(mode(h.paths.statusPath) == 0o600)
        #expect(mode(h.paths.lockPath) == 0o600)
        #expect(mode(h.paths.logPath) == 0o600)
        let status = try String(contentsOfFile: h.paths.statusPath, encoding: .utf8)
        #expect(!status.contains(DaemonHarness.token) && !h.log.contains(DaemonHarness.token), "no secret in status or log")
    }

    @Test(.requires(.builtBinary))
    func `config mistakes name the key and the file, at start and for run`() async throws {
        let h = try await DaemonHarness.make(config: ["heartbeatSeconds": 240, "silenceMs": "fast"])
        defer { h.tearDown() }
        var r = try await h.run(["start", "--idle"])
        #expect(r.status == 1 && r.stderr.contains(h.paths.configPath) && r.stderr.contains("\"silenceMs\""), "\(r.stderr)")
        try h.writeConfig(["heartbeatSecs": 240])
        r = try await h.run(["run", "--idle"])
        #expect(r.status == 1 && r.stderr.contains("\"heartbeatSecs\": unknown option"), "\(r.stderr)")
        try h.writeConfig(["staleAfterSeconds": 300])
        var bad = h.command
        bad.extraEnvironment["OPENCLAW_TALK_HEARTBEAT_SECONDS"] = "often"
        r = try await bad.run(["start", "--idle"])
        #expect(r.status == 1 && r.stderr.contains("OPENCLAW_TALK_HEARTBEAT_SECONDS"), "\(r.stderr)")
        #expect(InstanceLock.holder(path: h.paths.lockPath) == nil, "nothing was started")
    }

    @Test(.requires(.builtBinary))
    func `SIGHUP reloads the config of a detached daemon and a bad reload keeps the old one`() async throws {
        let h = try await DaemonHarness.make(config: ["voice": "en-us", "heartbeatSeconds": 240])
        defer { h.tearDown() }
        let pid = try await h.start(["--idle"] + (try h.fileDevices))
        var r = try await h.run(["config", "show"])
        #expect(r.status == 0 && r.stdout.contains("voice = en-us    (\(h.paths.configPath))"), "\(r.stdout) \(r.stderr)")

        try h.writeConfig(["voice": "en-gb", "heartbeatSeconds": 60])
        kill(pid, SIGHUP)
        #expect(try await h.eventually {
            try await h.run(["config", "show"]).stdout.contains("voice = en-gb")
        }, "reloaded: \(h.log)")
        #expect(h.log.contains("configuration reloaded"))

        try h.writeConfig(["voice": "de", "heartbeatSeconds": "soon"])
        kill(pid, SIGHUP)
        #expect(await h.eventually { h.log.contains("configuration reload failed") }, "\(h.log)")
        #expect(h.log.contains("\"heartbeatSeconds\""), "the error names the key")
        r = try await h.run(["config", "show"])
        #expect(r.stdout.contains("voice = en-gb") && r.stdout.contains("heartbeatSeconds = 60"), "the old config stays: \(r.stdout)")
        let serving = try await h.status()
        #expect(DaemonHarness.alive(pid) && serving != nil, "the daemon goes on")
    }

    /// 10 000 malformed requests against the real daemon: each gets an error object, and the daemon serves on.
    @Test(.requires(.builtBinary))
    func `fuzzing the real daemon's control socket leaves it serving`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let pid = try await h.start(["--idle"] + (try h.fileDevices))
        let socket = h.paths.socketPath
        let count = 10_000
        let codes = try await offPool { () -> [String: Int] in
            var random = SplitMix64(state: 10)
            let fixed = ["[1]", "{\"cmd\": 7}", "{\"cmd\":\"say\",\"args\":{\"text\":5}}", "{\"cmd\":\"ptt\",\"args\":{\"action\":\"hold\"}}",
                         "{\"cmd\":\"status\"", "null", "\"pause\"", "{\"cmd\":\"\"}", "{\"id\":[],\"cmd\":\"nope\"}",
                         "{\"id\":1,\"cmd\":\"frobnicate\"}", "{\"id\":2,\"cmd\":\"say\",\"args\":{\"text\":\"\"}}"]
            let client = try ControlClient(path: socket)
            var codes: [String: Int] = [:]
            var sent = 0
            while sent < count {
                let n = min(250, count - sent)
                var batch: [UInt8] = []
                for i in 0..<n {
                    if (sent + i) % 2 == 0 {
                        batch += (0..<(1 + Int(random.next() % 120))).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                            .map { $0 == 10 ? 32 : $0 } + [UInt8(ascii: "x")]
                    } else {
                        batch += Array(fixed[(sent + i) / 2 % fixed.count].utf8)
                    }
                    batch.append(10)
                }
                try client.send(batch)
                for _ in 0..<n {
                    let reply = try client.readJSONLine()
                    guard case .bool(false)? = reply["ok"], let code = reply["error"]?["code"]?.stringValue else {
                        throw ControlClientError.badReply("\(reply)")
                    }
                    codes[code, default: 0] += 1
                }
                sent += n
            }
            return codes
        }
        #expect(codes.values.reduce(0, +) == count, "\(codes)")
        #expect((codes["unknown_command"] ?? 0) > 0 && (codes["bad_args"] ?? 0) > 0, "well-formed bad requests reach the service too: \(codes)")
        #expect(DaemonHarness.alive(pid))
        #expect(try await h.call("ping").outcome == .success(.string("pong")))
        #expect(try await h.status()?.state == "idle", "the session was not disturbed")
        #expect(h.log.contains("serving"))
    }

    /// status.json is replaced atomically: read in a tight loop while the daemon rewrites it as fast as commands
    /// change the state, every read is one whole JSON document. Every command must succeed (each one is a
    /// rewrite), and the reader must have raced them: it counts how often the file changed between two of its
    /// reads and the states it saw, so reads that all came after the last rewrite fail.
    @Test(.requires(.builtBinary))
    func `status.json is always one valid JSON document while it is rewritten under load`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        _ = try await h.start(["--idle"] + (try h.fileDevices))
        let socket = h.paths.socketPath
        let file = h.paths.statusPath
        let done = Flag()
        let reading = Flag()
        let writer = Task {
            defer { done.set() }
            return try await offPool { () -> [String] in
                // Not before the reader runs: on a loaded machine its thread may start late.
                while !reading.isSet { usleep(1000) }
                let client = try ControlClient(path: socket)
                var refused: [String] = []
                for i in 0..<200 {
                    let cmd = i % 2 == 0 ? "talk.start" : "talk.stop"
                    if case .failure(let error) = try client.call(cmd).outcome { refused.append("\(cmd): \(error)") }
                }
                return refused
            }
        }
        let (reads, changes, states, broken) = try await offPool { () -> (Int, Int, Set<String>, [String]) in
            var reads = 0
            var changes = 0
            var last = Data()
            var states = Set<String>()
            var broken: [String] = []
            reading.set()
            while !done.isSet {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                reads += 1
                if data != last { changes += 1 }
                last = data
                if let status = try? JSONDecoder.serviceDecoder.decode(ServiceStatus.self, from: data) {
                    states.insert(status.state)
                } else {
                    broken.append(String(decoding: data.prefix(200), as: UTF8.self))
                }
            }
            return (reads, changes, states, broken)
        }
        let refused = try await writer.value
        #expect(refused.isEmpty, "\(refused.count) commands failed, e.g. \(refused.first ?? "")")
        #expect(broken.isEmpty, "\(broken.count) torn reads of \(reads), e.g. \(broken.first ?? "")")
        // 200 state changes, each a rewrite: the reader saw a good share of them, in both states.
        #expect(changes >= 20 && states.isSuperset(of: ["listening", "idle"]),
                "\(reads) reads saw the file change \(changes) times, in states \(states)")
    }
}

final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
