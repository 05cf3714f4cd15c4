import Foundation
import TalkService
import TalkTestSupport
import Testing

@testable import SessionBridge
@testable import TalkDaemon

/// `notify` through a running daemon, `run --no-notifications`, and `send`'s `--session`, `--notify` and `--speak`, as
/// a user runs them against the reference Gateway, a test notification server on a private bus and, for speech, a
/// private PulseAudio.
@Suite struct DeskCommandTests {
    static let nowhere = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"]

    static func control(_ h: DaemonHarness, _ line: String) async throws -> JSONValue {
        let gateway = h.gateway
        return try await offPool { try gateway.control(line) as JSONValue }
    }

    /// A daemon on silent file devices whose desktop is `server`, connected to its Gateway.
    static func daemon(_ server: NotificationServer, _ options: [String] = []) async throws -> DaemonHarness {
        let h = try await DaemonHarness.make(environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress])
        _ = try await h.start(["--idle"] + options + (try h.fileDevices))
        #expect(try await h.eventually { try await h.status()?.gateway.connected == true }, "the daemon did not connect: \(h.log)")
        return h
    }

    @Test(.requires(.builtBinary)) func `notify with a daemon running is shown by the daemon, on its desktop`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let h = try await Self.daemon(server)
        defer { h.tearDown() }
        // The command itself has no desktop: only the daemon can show it.
        let shown = try await h.command.run(["notify", "Build", "Done"], environment: Self.nowhere)
        #expect(shown.status == 0, "notify: \(shown.stderr)")
        #expect(shown.stdout == "Shown by the daemon.\n")
        let call = try #require(server.notifications.last)
        #expect((call.summary, call.body, call.urgency) == ("Build", "Done", 1))
        let quiet = try await h.command.run(["notify", "--priority", "passive", "Backup", "Finished"], environment: Self.nowhere)
        #expect(quiet.status == 0, "notify: \(quiet.stderr)")
        let passive = try #require(server.notifications.last)
        #expect((passive.summary, passive.urgency) == ("Backup", 0))
    }

    @Test(.requires(.builtBinary)) func `run --no-notifications refuses the Gateway's system.notify and notify, and shows nothing but approvals`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let h = try await Self.daemon(server, ["--no-notifications"])
        defer { h.tearDown() }
        let result = try #require(try await Self.control(
            h, #"{"cmd":"node-invoke","command":"system.notify","params":{"title":"Build","body":"Done"},"timeoutMs":15000}"#)["result"])
        #expect(result["ok"] == false, "\(result)")
        #expect(result["error"]?["message"]?.stringValue?.contains("NOTIFICATIONS_DISABLED") == true, "\(result)")
        let local = try await h.command.run(["notify", "Build", "Done"])
        #expect(local.status == 1)
        #expect(local.stderr.contains("NOTIFICATIONS_DISABLED"), "\(local.stderr)")
        // Approvals are not notifications the Gateway sends: their notification still shows.
        _ = try await Self.control(h, #"{"cmd":"approval-request","command":"make install"}"#)
        #expect(await server.wait { calls in calls.contains { $0.body.hasPrefix("make install") } }, "the approval was not shown")
        #expect(!server.notifications.contains { $0.summary == "Build" }, "a notification was shown: \(server.notifications)")
        #expect(try await Self.control(h, "violations")["count"] == 0)
    }

    @Test func `send --session goes to that session, and --notify shows the reply or why nothing was sent`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let h = try await DaemonHarness.make(environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress],
                                             gatewayArguments: ["--attachment-max-bytes", "4000"])
        defer { h.tearDown() }
        let sent = try await h.command.run(["send", "file this", "--session", "agent:main:work", "--notify"])
        #expect(sent.status == 0, "send: \(sent.stderr)")
        let transcript = try #require(try await Self.control(h, "chat-transcripts")["transcripts"]?.arrayValue?.last)
        #expect(transcript["sessionKey"] == "agent:main:work")
        #expect(transcript["message"] == "file this")
        let reply = try #require(server.notifications.last)
        #expect((reply.summary, reply.body) == ("OpenClaw", "echo: file this"))

        let path = h.command.home + "/big.txt"
        try Data(repeating: UInt8(ascii: "a"), count: 5000).write(to: URL(fileURLWithPath: path))
        let refused = try await h.command.run(["send", "--file", path, "--notify"])
        #expect(refused.status == 1)
        let why = try #require(server.notifications.last)
        #expect(why.summary == "Not sent to OpenClaw")
        #expect(why.body.contains("big.txt is 5000 bytes") && why.urgency == 2, "\(why)")
    }

    @Test(.requires(.builtBinary, PrivatePulse.utilities))
    func `send --speak speaks the reply on the speaker`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        try await PrivatePulse.with { pulse in
            let command = try BuiltCommand(home: h.command.home, through: pulse.launcher)
            let silent = try pulse.record()
            let quiet = try await command.run(["send", "what time is it"])
            #expect(quiet.status == 0, "send: \(quiet.stderr)")
            #expect(Self.voicedMilliseconds(try await silent.finish()) == 0, "without --speak nothing is played")
            let recording = try pulse.record()
            let spoken = try await command.run(["send", "what time is it", "--speak"])
            #expect(spoken.status == 0, "send: \(spoken.stderr)")
            #expect(spoken.stdout.contains("echo: what time is it"))
            let voiced = Self.voicedMilliseconds(try await recording.finish())
            // "echo: what time is it" in espeak-ng's voice lasts over a second; a few syllables are 300 ms.
            #expect(voiced >= 300, "the reply was not heard on the speaker: \(voiced) ms of voice")
            // --output: the reply goes to the file, and the speaker stays silent.
            let wav = h.command.home + "/reply.wav"
            let elsewhere = try pulse.record()
            let written = try await command.run(["send", "what time is it", "--speak", "--output", wav])
            #expect(written.status == 0, "send: \(written.stderr)")
            #expect(Self.voicedMilliseconds(try await elsewhere.finish()) == 0, "--output was not honoured: the reply played on the speaker")
            let bytes = (try? FileManager.default.attributesOfItem(atPath: wav)[.size] as? Int) ?? 0
            // Over a second of 22 050 Hz 16-bit speech, as on the speaker.
            #expect(bytes > 44_100, "\(wav) holds \(bytes) bytes")
        }
    }

    @Test func `send takes --sink and --output only with --speak`() throws {
        let parser = CommandParser(root: OpenClawTalk.self)
        let send = try #require(try parser.command(["send", "hi", "--speak", "--sink", "vsink"]) as? OpenClawTalk.Send)
        #expect(send.speak && send.devices.sink == "vsink" && send.devices.output == nil)
        #expect(throws: ValidationError("'--output' says where the reply is spoken; add '--speak'")) {
            _ = try parser.command(["send", "hi", "--output", "r.wav"])
        }
        #expect(throws: ValidationError(AudioDeviceOptionsTests.speakerConflict)) {
            _ = try parser.command(["send", "hi", "--speak", "--sink", "vsink", "--output", "r.wav"])
        }
    }

    /// Milliseconds of 16 kHz audio in 20 ms windows louder than -40 dBFS.
    static func voicedMilliseconds(_ samples: [Int16]) -> Int {
        stride(from: 0, to: samples.count - 319, by: 320).filter { start in
            let window = samples[start..<start + 320]
            let meanSquare = window.reduce(0.0) { $0 + Double($1) * Double($1) } / 320
            return meanSquare.squareRoot() > 328   // -40 dBFS
        }.count * 20
    }
}
