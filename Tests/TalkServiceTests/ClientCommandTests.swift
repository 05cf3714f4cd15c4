import Foundation
import Glibc
import TalkTestSupport
import Testing
@testable import TalkService

/// The CLI's client commands, run as the built binary against a control server serving a fake session
/// in this process (the Talk loop will implement the same protocol).
@Suite(.requires(.builtBinary)) struct ClientCommandTests {
    struct Outcome { var status: Int32; var stdout: String; var stderr: String }

    private func run(_ arguments: [String], runtime: String, home: String? = nil) async throws -> Outcome {
        let binary = try TestInput.builtBinary.path()
        var environment = TestInputs.environment
        environment["XDG_RUNTIME_DIR"] = runtime
        if let home { environment["HOME"] = home; environment["XDG_CONFIG_HOME"] = nil; environment["USER"] = "ada" }
        let folder = try TemporaryFolder()
        let (status, stdout) = try await ChildProcess.output(binary, arguments, environment: environment, stderrPath: folder.path + "/err")
        return Outcome(status: status, stdout: stdout, stderr: try String(contentsOfFile: folder.path + "/err", encoding: .utf8))
    }

    @Test func commandsDriveTheSessionAndStatusShowsIt() async throws {
        let h = try ServiceHarness()
        defer { Task { await h.shutdown() } }
        await h.session.set { $0.connection = .connected; $0.gatewayURL = "ws://127.0.0.1:18789" }
        let runtime = h.folder.path + "/run"

        let started = try await run(["talk", "start"], runtime: runtime)
        #expect(started.status == 0)
        #expect(started.stdout == "Talk started.\n")
        let paused = try await run(["pause"], runtime: runtime)
        #expect(paused.stdout == "Paused.\n")
        let ptt = try await run(["ptt", "once"], runtime: runtime)
        #expect(ptt.stdout == "Push-to-talk once.\n")
        let badPtt = try await run(["ptt", "sideways"], runtime: runtime)
        #expect(badPtt.status == 2)
        #expect(await h.session.calls == ["talkStart", "pause", "ptt:once"])

        let json = try await run(["status", "--json"], runtime: runtime)
        #expect(json.status == 0)
        let status = try JSONDecoder.serviceDecoder.decode(ServiceStatus.self, from: Data(json.stdout.utf8))
        #expect(status.state == "paused")
        #expect(status.talk.active)
        #expect(status.gateway.connected)
        #expect(status.staleAt != nil)
        #expect(status.pid == getpid())

        let text = try await run(["status"], runtime: runtime)
        #expect(text.stdout == "paused, connected to ws://127.0.0.1:18789\n")
        let bar = try await run(["status", "--waybar"], runtime: runtime)
        let fields = try JSONDecoder().decode([String: String].self, from: Data(bar.stdout.utf8))
        #expect(fields["class"] == "paused")
        #expect(bar.stdout.filter { $0 == "\n" }.count == 1)

        let events = try await run(["events"], runtime: runtime)
        #expect(events.stdout.hasPrefix(#"{"event":"status","status":{"#))

        let stop = try await run(["stop"], runtime: runtime)
        #expect(stop.stdout == "Stopping.\n")
        #expect(h.stops.count == 1)
    }

    @Test func withoutADaemonCommandsExitWith3AndADeadDaemonsStatusIsStale() async throws {
        let folder = try TemporaryFolder()
        let runtime = folder.path + "/run"
        let pause = try await run(["pause"], runtime: runtime)
        #expect(pause.status == 3)
        #expect(pause.stderr.contains("openclaw-talk is not running"))
        let none = try await run(["status"], runtime: runtime)
        #expect(none.status == 3)

        // A daemon killed without cleaning up left its status file behind.
        try RuntimePaths.ensurePrivateDirectory(folder.paths.runtimeDirectory)
        let beat = Date(timeIntervalSince1970: 1_800_000_000)
        try StatusFile(path: folder.paths.statusPath).write(ServiceStatus(
            state: "listening", talk: .init(active: true), gateway: .init(connected: true, state: "connected"),
            audio: .init(), pid: 999_999_999, heartbeatAt: beat, staleAt: beat + 300, stale: false))
        let dead = try await run(["status"], runtime: runtime)
        #expect(dead.status == 3)
        #expect(dead.stdout == "not running (stale status from 2027-01-15T08:00:00Z)\n")
        let deadJSON = try await run(["status", "--json"], runtime: runtime)
        #expect(deadJSON.stdout.contains(#""stale":true"#))
        let bar = try await run(["status", "--waybar"], runtime: runtime)
        #expect(bar.status == 0)
        #expect(bar.stdout.contains(#""class":"stopped""#))
    }

    @Test func installServiceWritesTheUnitAndPrintsTheNextSteps() async throws {
        let folder = try TemporaryFolder()
        let out = try await run(["install-service"], runtime: folder.path, home: folder.path)
        #expect(out.status == 0)
        let unit = try String(contentsOfFile: folder.path + "/.config/systemd/user/openclaw-talk.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\"\(try TestInput.builtBinary.path())\" run"))
        #expect(out.stdout.contains("systemctl --user daemon-reload && systemctl --user enable --now openclaw-talk"))
        #expect(out.stdout.contains("loginctl enable-linger ada"))
    }
}
