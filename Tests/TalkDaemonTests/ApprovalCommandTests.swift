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

    /// Plugin approvals' ids all start with upstream's reserved `plugin:`: the id `approvals` tells the user to type
    /// must still name one approval when several plugins ask at once (these two share the first eight hex digits).
    @Test func `a plugin approval is listed and approve decides it with plugin.approval.resolve, by the id it was shown with`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let id = "plugin:3f0c2a9e-1b7d-4c55-9a21-6d0e8b3f4a10"
        let twin = "plugin:3f0c2a9e-88aa-4f02-b0c3-9d1e2f3a4b5c"
        for (approval, title) in [(id, "Post to the channel"), (twin, "Delete the draft")] {
            _ = try await Self.control(h, #"{"cmd":"approval-request","kind":"plugin","command":"\#(title)","id":"\#(approval)"}"#)
        }
        let listed = try await h.command.run(["approvals", "--json"])
        #expect(listed.status == 0, "approvals: \(listed.stderr)")
        let json = try #require(JSONValue.parse(Array(listed.stdout.utf8))?.arrayValue)
        let mine = try #require(json.first { $0["id"]?.stringValue == id })
        #expect(mine["kind"] == "plugin")
        #expect(mine["summary"] == "Post to the channel")
        #expect(mine["toolName"] == "refgw.tool")
        let plain = try await h.command.run(["approvals"])
        #expect(plain.stdout.contains("plugin: Post to the channel"), "\(plain.stdout)")
        let hint = try #require(Self.hint(in: plain.stdout, after: "Post to the channel"), "no hint: \(plain.stdout)")

        let decided = try await h.command.run(["approve", hint, "allow-once"])
        #expect(decided.status == 0, "approve \(hint): \(decided.stderr)")
        #expect(decided.stdout == "Allowed once: \(id)\n")
        let resolutions = try await Self.control(h, "approvals")["resolutions"]?.arrayValue ?? []
        #expect(resolutions.map { [$0["id"]?.stringValue, $0["kind"]?.stringValue, $0["decision"]?.stringValue] } == [[id, "plugin", "allow-once"]])
        let frames = try await Self.control(h, #"{"cmd":"frames","last":200}"#)["frames"]?.arrayValue ?? []
        #expect(frames.compactMap { $0["frame"]?["method"]?.stringValue }.filter { $0.hasSuffix("approval.resolve") } == ["plugin.approval.resolve"])
        #expect(try await Self.control(h, "violations")["count"] == 0)
    }

    /// The id `approvals` prints in "decide with: openclaw-talk approve ID ..." for the approval titled `title`.
    static func hint(in listing: String, after title: String) -> String? {
        guard let at = listing.range(of: title) else { return nil }
        guard let line = listing[at.upperBound...].split(separator: "\n").first(where: { $0.contains("decide with:") }) else { return nil }
        let words = line.split(separator: " ")
        guard let approve = words.firstIndex(of: "approve"), approve + 1 < words.count else { return nil }
        return String(words[approve + 1])
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

    /// A bare `send` typed at a terminal would otherwise sit waiting, like `cat`, for an end of input nobody means
    /// to type: it says how to give the message and ends, whatever is typed, with nothing sent.
    @Test func `a bare send on a terminal stops at once and says how to give the message`() async throws {
        let h = try await DaemonHarness.make()
        defer { h.tearDown() }
        let running = try h.command.start(["send", "--no-reply"], input: .terminal(answer: "typed at the prompt"))
        // Far beyond a refusal's start-up, far below the minutes a user would wait before pressing Ctrl-C.
        let refused = try await running.finish(timeout: .seconds(20))
        #expect(refused.status != 0, "a bare send on a terminal did not refuse")
        for way in ["send TEXT", "send --file", "| openclaw-talk send -"] {
            #expect(refused.stderr.contains(way), "the refusal does not name '\(way)': \(refused.stderr)")
        }
        let frames = try await Self.control(h, #"{"cmd":"frames","last":200}"#)["frames"]?.arrayValue ?? []
        #expect(!frames.contains { $0["frame"]?["method"] == "chat.send" }, "a chat.send went out")
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

    /// Each file within its own limit, the message is still refused when its frame, base64 included, would exceed
    /// `policy.maxPayload`: nothing half-sent, the Gateway never sees it.
    @Test func `a message whose frame would exceed maxPayload is refused before anything is sent`() async throws {
        let maxPayloadBytes = 100_000
        let h = try await DaemonHarness.make(gatewayArguments: ["--max-payload", "\(maxPayloadBytes)", "--attachment-max-bytes", "300000"])
        defer { h.tearDown() }
        let path = h.command.home + "/notes.txt"
        // 90 000 bytes fit the attachment limit; their base64 (120 000) does not fit the frame.
        try Data(repeating: UInt8(ascii: "a"), count: 90_000).write(to: URL(fileURLWithPath: path))
        let refused = try await h.command.run(["send", "read this", "--file", path])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("per message. Nothing was sent."), "\(refused.stderr)")
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
