import Foundation
import TalkService
import TalkTestSupport
import Testing

@testable import SessionBridge

/// `approvals`, `approve`, `send` and `notify` as a user runs them, against the reference Gateway (and a test
/// notification server on a private session bus).
@Suite struct ApprovalCommandTests {
    /// refgw's control channel, off the pool (it blocks until refgw answers).
    static func control(_ h: DaemonHarness, _ line: String) async throws -> JSONValue {
        let gateway = h.gateway
        return try await offPool { try gateway.control(line) as JSONValue }
    }

    @Test func `approve from the command line decides the approval its prefix names`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let id = try #require(try await Self.control(h, #"{"cmd":"approval-request","command":"rm -rf build"}"#)["approval"]?["id"]?.stringValue)
        let other = try #require(try await Self.control(h, #"{"cmd":"approval-request","command":"ls"}"#)["approval"]?["id"]?.stringValue)
        let listed = try await h.command.run(["approvals", "--json"])
        #expect(listed.status == 0, "approvals: \(listed.stderr)")
        let json = try #require(JSONValue.parse(Array(listed.stdout.utf8))?.arrayValue)
        #expect(Set(json.compactMap { $0["id"]?.stringValue }) == [id, other])
        #expect(json.first { $0["id"]?.stringValue == id }?["command"] == "rm -rf build")
        let plain = try await h.command.run(["approvals"])
        #expect(plain.stdout.contains("run: rm -rf build"))

        let decided = try await h.command.run(["approve", String(id.prefix(8)), "allow-once"])
        #expect(decided.status == 0, "approve: \(decided.stderr)")
        #expect(decided.stdout == "Allowed once: \(id)\n")
        let resolutions = try await Self.control(h, "approvals")["resolutions"]?.arrayValue ?? []
        #expect(resolutions.map { [$0["id"]?.stringValue, $0["decision"]?.stringValue] } == [[id, "allow-once"]])

        let gone = try await h.command.run(["approve", "no-such-id", "deny"])
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("No pending approval"))
        let twice = try await h.command.run(["approve", id, "deny"])
        #expect(twice.status == 1)
        #expect(twice.stderr.contains("already decided"))
        #expect(try await Self.control(h, "violations")["count"] == 0)
    }

    @Test func `send with text and an image reaches the Gateway intact and prints the reply`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let image: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<5000).map { UInt8($0 % 251) }
        let path = h.command.home + "/screenshot.png"
        try Data(image).write(to: URL(fileURLWithPath: path))
        let sent = try await h.command.run(["send", "what is in this screenshot", "--file", path])
        #expect(sent.status == 0, "send: \(sent.stderr)")
        #expect(sent.stdout.contains("echo: what is in this screenshot"))
        let transcript = try #require(try await Self.control(h, "chat-transcripts")["transcripts"]?.arrayValue?.last)
        #expect(transcript["message"] == "what is in this screenshot")
        let attachment = try #require(transcript["attachments"]?.arrayValue?.first)
        #expect(attachment["mimeType"] == "image/png")
        #expect(attachment["fileName"] == "screenshot.png")
        #expect(attachment["bytes"] == .int(Int64(image.count)))
        #expect(attachment["sha256"]?.stringValue == Digest.sha256(image).map { String(format: "%02x", $0) }.joined())
        #expect(try await Self.control(h, "violations")["count"] == 0)
    }

    /// A file manager's action or a pipe gives the text on standard input: it goes out as typed (lines, indentation
    /// and all), only the surrounding blank lines trimmed, with '-' and with no TEXT at all.
    @Test func `send - sends standard input's text, and an empty one is refused before anything is sent`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let typed = "first line\n  indented – naïve café\n\nlast line: 3 > 2"
        let piped = try await h.command.run(["send", "-"], input: .text("\n" + typed + "\n"))
        #expect(piped.status == 0, "send -: \(piped.stderr)")
        #expect(piped.stdout.contains("echo: " + typed), "\(piped.stdout)")
        let bare = try await h.command.run(["send", "--no-reply"], input: .text("from a pipe\n"))
        #expect(bare.status == 0, "send: \(bare.stderr)")
        let transcripts = try await Self.control(h, "chat-transcripts")["transcripts"]?.arrayValue ?? []
        #expect(transcripts.map { $0["message"]?.stringValue } == [typed, "from a pipe"])

        for empty in ["", " \n\t\n"] {
            let refused = try await h.command.run(["send", "-"], input: .text(empty))
            #expect(refused.status != 0, "an empty message was sent")
            #expect(refused.stderr.contains("Nothing to send: standard input was empty"), "\(refused.stderr)")
        }
        let frames = try await Self.control(h, #"{"cmd":"frames","last":200}"#)["frames"]?.arrayValue ?? []
        #expect(frames.filter { $0["frame"]?["method"] == "chat.send" }.count == 2, "an empty message reached the Gateway")
        #expect(try await Self.control(h, "violations")["count"] == 0)
    }

    @Test func `an oversize file is refused before anything is sent`() async throws {
        let h = try await DaemonHarness.make(gatewayArguments: ["--attachment-max-bytes", "4000"])
        defer { h.tearDown() }
        let path = h.command.home + "/notes.txt"
        try Data(repeating: UInt8(ascii: "a"), count: 5000).write(to: URL(fileURLWithPath: path))
        let refused = try await h.command.run(["send", "read this", "--file", path])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("notes.txt is 5000 bytes"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Nothing was sent"))
        let frames = try await Self.control(h, #"{"cmd":"frames","last":200}"#)["frames"]?.arrayValue ?? []
        #expect(!frames.contains { $0["frame"]?["method"] == "chat.send" }, "a chat.send went out")
        #expect(try await Self.control(h, "chat-transcripts")["transcripts"]?.arrayValue?.isEmpty == true)
    }

    @Test func `an image over the Gateway's image limit is re-encoded to fit`() async throws {
        let h = try await DaemonHarness.make(gatewayArguments: ["--attachment-max-image-bytes", "60000"])
        defer { h.tearDown() }
        // A PNG of noise (600 KB), written by Python's zlib: large as JPEG too, so it must be made smaller.
        let path = h.command.home + "/photo.png"
        let script = """
            import random, struct, zlib
            random.seed(7); w, h = 500, 400
            raw = b"".join(b"\\0" + bytes(random.getrandbits(8) for _ in range(w * 3)) for _ in range(h))
            chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
            open("\(path)", "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
            """
        let (status, _) = try ChildProcess.run("/usr/bin/env", ["python3", "-c", script], environment: TestInputs.environment)
        try #require(status == 0, "python3 could not write the PNG")
        let sent = try await h.command.run(["send", "a photo", "--file", path, "--no-reply"])
        #expect(sent.status == 0, "send: \(sent.stderr)")
        let attachment = try #require(try await Self.control(h, "chat-transcripts")["transcripts"]?.arrayValue?.last?["attachments"]?.arrayValue?.first)
        #expect(attachment["mimeType"] == "image/jpeg")
        #expect(attachment["fileName"] == "photo.jpg")
        #expect((attachment["bytes"]?.intValue ?? .max) <= 60000)
    }

    @Test func `notify without a daemon shows it on the desktop, and says so when nothing can`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let command = try BuiltCommand()
        defer { command.removeHome() }
        let shown = try await command.run(["notify", "--priority", "timeSensitive", "Build", "Done"],
                                          environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress])
        #expect(shown.status == 0, "notify: \(shown.stderr)")
        let call = try #require(server.notifications.last)
        #expect((call.summary, call.body, call.urgency) == ("Build", "Done", 2))
        let nowhere = try await command.run(["notify", "Build", "Done"],
                                            environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        #expect(nowhere.status == 1)
        #expect(nowhere.stderr.contains("NOTIFICATIONS_UNAVAILABLE"))
    }
}
