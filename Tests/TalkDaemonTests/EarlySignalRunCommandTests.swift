import Foundation
import Glibc
import TalkTestSupport
import Testing

@testable import SessionBridge

/// A SIGTERM in the first seconds of `run --aec pulse` gets the clean stop, which unloads the module-echo-cancel
/// the session loaded and leaves no control socket, status or lock behind: the signals are caught from the start
/// (`UnixSignals`) and every part started is stopped (`ServiceGroup`). On a private PulseAudio, at three start-up
/// moments: while pairing (the lock taken, nothing else yet), just before the devices open, and just after the module
/// was loaded. Its name ends in RunCommandTests: `make test`'s second pass.
@Suite(.serialized) struct EarlySignalRunCommandTests {
    static let moments = ["pairing", "listening", "Loaded PulseAudio echo cancellation"]

    @Test(.requires(.builtBinary, PrivatePulse.utilities), arguments: moments)
    func `a SIGTERM while run --aec pulse starts leaves no module-echo-cancel loaded`(moment: String) async throws {
        try await PrivatePulse.with(microphone: .ownSink) { pulse in
            let gw = try await RunCommandTests.gateway()
            defer { gw.stop() }
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            // Info lines on stderr name the moments ("listening" is logged right before the devices open).
            let running = try command.start([
                "run", "--gateway", gw.startup.url, "--token", RunCommandTests.token, "--source", "vmic", "--sink", "vsink",
                "--aec", "pulse", "--json", "--seconds", "120",
            ], environment: ["OPENCLAW_TALK_LOG_LEVEL": "info"])
            try #require(await running.waitForStderr(moment, timeout: .seconds(60)), "never got to '\(moment)': \(running.stderrSoFar.suffix(600))")
            kill(running.process.processIdentifier, SIGTERM)
            let r = try await running.finish(timeout: .seconds(60))
            #expect(r.status == 0, "not a clean stop (exit status \(r.status)): \(r.stderr.suffix(600))")
            #expect(r.stderr.contains("SIGTERM: stopping"), "\(r.stderr.suffix(600))")
            let modules = try await pulse.pactl(["list", "modules", "short"])
            #expect(!modules.contains("module-echo-cancel"), "left loaded after a SIGTERM at '\(moment)': \(modules)")
            let runtime = command.runtimeFolder + "/openclaw-talk"
            #expect(!FileManager.default.fileExists(atPath: runtime + "/control.sock"), "control socket left after a SIGTERM at '\(moment)'")
            #expect(!FileManager.default.fileExists(atPath: runtime + "/status.json"), "status.json left after a SIGTERM at '\(moment)'")
            // A clean release empties the lock file; a process that died leaves its pid there.
            let lock = (try? String(contentsOfFile: command.stateFolder + "/daemon.lock", encoding: .utf8)) ?? ""
            #expect(lock.isEmpty, "the lock still names pid \(lock) after a SIGTERM at '\(moment)'")
        }
    }
}
