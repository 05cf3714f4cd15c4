import Foundation
import Glibc
import TalkBench
import TalkTestSupport
import Testing

@testable import SessionBridge

/// A `run --aec pulse` whose start-up fails leaves no module-echo-cancel loaded and no control socket or status, and
/// the error exits 1. Two failures: the transcription relay refused (`--stt gateway` against a Gateway of the legacy
/// era; it failed after the devices opened and left the module loaded, now it is checked before they open), and the
/// control socket that cannot be made (a folder stands at its path), after `SessionAudio.open`. On a private PulseAudio. Its name ends in
/// RunCommandTests: `make test`'s second pass.
@Suite(.serialized) struct FailedStartRunCommandTests {
    enum Failure: String, CaseIterable, Sendable {
        case relayRefused = "the transcription relay refused"
        case socketUnusable = "the control socket unusable"
    }

    @Test(.requires(.builtBinary, PrivatePulse.utilities), arguments: Failure.allCases)
    func `a run --aec pulse that fails to start leaves no module-echo-cancel loaded`(failure: Failure) async throws {
        try await PrivatePulse.with(microphone: .ownSink) { pulse in
            let gw = try await offPool {
                try ReferenceGatewayProcess(
                    repositoryRoot: TestInputs.packageRoot,
                    arguments: ["--token", RunCommandTests.token, "--auto-approve"] + (failure == .relayRefused ? ["--talk-era", "legacy"] : []))
            }
            defer { gw.stop() }
            let command = try BuiltCommand(through: pulse.launcher)
            defer { command.removeHome() }
            let socket = command.runtimeFolder + "/openclaw-talk/control.sock"
            if failure == .socketUnusable {
                try FileManager.default.createDirectory(
                    atPath: socket + "/in-the-way", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            let r = try await command.run([
                "run", "--gateway", gw.startup.url, "--token", RunCommandTests.token, "--source", "vmic", "--sink", "vsink",
                "--aec", "pulse", "--stt", failure == .relayRefused ? "gateway" : "local", "--seconds", "60",
            ], environment: ["OPENCLAW_TALK_LOG_LEVEL": "info"])
            #expect(r.status == 1, "exit status \(r.status): \(r.stderr.suffix(800))")
            if failure == .socketUnusable {
                #expect(r.stderr.contains("Loaded PulseAudio echo cancellation"), "the devices never opened: \(r.stderr.suffix(800))")
            }
            let modules = try await pulse.pactl(["list", "modules", "short"])
            #expect(!modules.contains("module-echo-cancel"), "left loaded after \(failure.rawValue): \(modules)")
            let daemonFolder = command.runtimeFolder + "/openclaw-talk"
            #expect(!FileManager.default.fileExists(atPath: daemonFolder + "/status.json"), "status.json left behind")
            if failure == .relayRefused {
                #expect(!FileManager.default.fileExists(atPath: socket), "control socket left behind")
            }
        }
    }
}
