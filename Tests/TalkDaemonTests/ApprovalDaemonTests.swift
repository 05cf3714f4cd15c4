import Foundation
import TalkService
import TalkTestSupport
import Testing

@testable import SessionBridge

/// The daemon's approvals and notifications with a desktop (a test notification server on a private bus): "approval
/// needed" over everything in the status, a notification whose buttons decide exactly its approval, one withdrawn
/// when decided elsewhere, and the Gateway's system.notify shown.
@Suite struct ApprovalDaemonTests {
    static func control(_ h: DaemonHarness, _ line: String) async throws -> JSONValue {
        let gateway = h.gateway
        return try await offPool { try gateway.control(line) as JSONValue }
    }

    /// Starts an idle daemon on `h` and waits until it is connected and the Gateway counts its operator socket as an
    /// approval client (a probe approval delivered to it, then denied).
    static func startApprovalClient(_ h: DaemonHarness) async throws {
        _ = try await h.start(["--idle"] + (try h.fileDevices))
        #expect(try await h.eventually { try await h.status()?.gateway.connected == true }, "the daemon did not connect: \(h.log)")
        #expect(try await h.eventually {
            (try? await Self.control(h, #"{"cmd":"approval-request","command":"true","id":"probe"}"#)["deliveredTo"]?.arrayValue?.isEmpty) == false
        })
        _ = try await Self.control(h, #"{"cmd":"approval-resolve","id":"probe","decision":"deny"}"#)
    }

    @Test(.requires(.builtBinary)) func `an approval shows in the status and as a notification whose button decides it`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let h = try await DaemonHarness.make(environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress])
        defer { h.tearDown() }
        try await Self.startApprovalClient(h)

        let id = try #require(try await Self.control(h, #"{"cmd":"approval-request","command":"rm -rf build"}"#)["approval"]?["id"]?.stringValue)
        let other = try #require(try await Self.control(h, #"{"cmd":"approval-request","command":"ls","ask":"always"}"#)["approval"]?["id"]?.stringValue)
        #expect(try await h.eventually { try await h.status()?.state == "approval needed" }, "no approval in the status")
        #expect(await server.wait { calls in calls.filter { $0.call == "Notify" && $0.body.hasPrefix("ls") }.count == 1 })
        let notified = server.notifications
        let mine = try #require(notified.last { $0.body.hasPrefix("rm -rf build") })
        #expect(mine.urgency == 2)
        #expect(mine.actions == [["allow-once", "Allow once"], ["allow-always", "Allow always"], ["deny", "Deny"]])
        let onlyOnce = try #require(notified.last { $0.body.hasPrefix("ls") })
        #expect(onlyOnce.actions == [["allow-once", "Allow once"], ["deny", "Deny"]])

        server.click(mine.id, "allow-once")
        #expect(try await h.eventually {
            let resolutions = try await Self.control(h, "approvals")["resolutions"]?.arrayValue ?? []
            return resolutions.contains { $0["id"]?.stringValue == id }
        })
        let resolutions = try await Self.control(h, "approvals")["resolutions"]?.arrayValue ?? []
        #expect(resolutions.filter { $0["id"]?.stringValue != "probe" }.map { [$0["id"]?.stringValue, $0["decision"]?.stringValue] }
                == [[id, "allow-once"]], "a click decided something else")

        // Decided elsewhere: its notification is taken down, and nothing waits any more.
        _ = try await Self.control(h, #"{"cmd":"approval-resolve","id":"\#(other)","decision":"deny","resolvedBy":"Phone"}"#)
        #expect(await server.wait { calls in calls.contains { $0.call == "CloseNotification" && $0.id == onlyOnce.id } })
        #expect(try await h.eventually { try await h.status()?.state != "approval needed" })
        #expect(try await Self.control(h, "violations")["count"] == 0)
    }

    /// A request in older Gateways' shape lists no decisions, so its notification offers all three; the Gateway
    /// refuses a click on "Allow always" (the command is ask-always). Nothing is decided, the refusal is shown, and
    /// since the click took the notification away, a new one offers what the Gateway still takes.
    @Test(.requires(.builtBinary)) func `a click the Gateway refuses decides nothing and leaves a notification of what is left`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let h = try await DaemonHarness.make(environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress])
        defer { h.tearDown() }
        try await Self.startApprovalClient(h)

        let id = try #require(try await Self.control(
            h, #"{"cmd":"approval-request","command":"rm -rf build","ask":"always","legacyShape":true}"#)["approval"]?["id"]?.stringValue)
        #expect(await server.wait { calls in calls.contains { $0.call == "Notify" && $0.body.hasPrefix("rm -rf build") } })
        let first = try #require(server.notifications.last { $0.body.hasPrefix("rm -rf build") })
        #expect(first.actions.map { $0[0] } == ["allow-once", "allow-always", "deny"])

        server.click(first.id, "allow-always")
        let refused = await server.wait { calls in calls.contains { $0.call == "Notify" && $0.summary == "Approval not decided" } }
        let again = await server.wait { calls in calls.filter { $0.call == "Notify" && $0.body.hasPrefix("rm -rf build") }.count == 2 }
        #expect(refused, "the refusal was not shown")
        #expect(server.notifications.last { $0.summary == "Approval not decided" }?.body.contains("'Allow always' is not offered") == true)
        #expect(again, "no notification is left to decide it")
        #expect(server.notifications.last { $0.body.hasPrefix("rm -rf build") }?.actions == [["allow-once", "Allow once"], ["deny", "Deny"]])
        let resolutions = try await Self.control(h, "approvals")["resolutions"]?.arrayValue ?? []
        #expect(!resolutions.contains { $0["id"]?.stringValue == id }, "something was decided")
        #expect(try await h.status()?.state == "approval needed")
    }

    @Test(.requires(.builtBinary)) func `the Gateway's system.notify is shown with its urgency and sound, and an empty one refused`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let h = try await DaemonHarness.make(environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress])
        defer { h.tearDown() }
        _ = try await h.start(["--idle"] + (try h.fileDevices))
        #expect(try await h.eventually { try await h.status()?.gateway.connected == true }, "the daemon did not connect: \(h.log)")
        let result = try #require(try await Self.control(
            h, #"{"cmd":"node-invoke","command":"system.notify","params":{"title":"Build","body":"Done","priority":"passive"},"timeoutMs":15000}"#)["result"])
        #expect(result["ok"] == true, "\(result)")
        #expect(result["payloadJSON"] == #"{"ok":true}"#)
        let call = try #require(server.notifications.last)
        #expect((call.summary, call.body, call.urgency) == ("Build", "Done", 0))
        #expect(call.hints["suppress-sound"] == nil, "a notification with no sound asked was silenced: \(call.hints)")
        // timeSensitive is critical, and `sound: none` (as iOS reads it) a silent notification.
        let urgent = try #require(try await Self.control(
            h, #"{"cmd":"node-invoke","command":"system.notify","params":{"title":"Door","body":"Someone rang","priority":"timeSensitive","sound":"none"},"timeoutMs":15000}"#)["result"])
        #expect(urgent["ok"] == true, "\(urgent)")
        let silent = try #require(server.notifications.last)
        #expect((silent.summary, silent.urgency) == ("Door", 2))
        #expect(silent.hints["suppress-sound"] == "true" || silent.hints["suppress-sound"] == "1", "\(silent.hints)")
        let empty = try #require(try await Self.control(h, #"{"cmd":"node-invoke","command":"system.notify","params":{"title":""},"timeoutMs":15000}"#)["result"])
        #expect(empty["error"]?["message"] == "INVALID_REQUEST: empty notification")
        #expect(try await Self.control(h, "violations")["count"] == 0)
    }

    /// No notification server on the session bus: with Talk off nothing can show or speak a notification, so the
    /// node says so with upstream's code instead of claiming it was shown; with speaking turned off too, that is the
    /// answer before the params are even read (upstream's Linux node checks availability first).
    @Test(.requires(.builtBinary)) func `without a notification server the Gateway's system.notify is answered NOTIFICATIONS_UNAVAILABLE`() async throws {
        for extra in [[], ["--no-speak-notifications"]] {
            let h = try await DaemonHarness.make(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/openclaw-talk-test-bus"])
            defer { h.tearDown() }
            _ = try await h.start(["--idle"] + extra + (try h.fileDevices))
            #expect(try await h.eventually { try await h.status()?.gateway.connected == true }, "the daemon did not connect: \(h.log)")
            let result = try #require(try await Self.control(
                h, #"{"cmd":"node-invoke","command":"system.notify","params":{"title":"Build","body":"Done"},"timeoutMs":15000}"#)["result"])
            #expect(result["ok"] == false, "\(extra): \(result)")
            #expect(result["error"]?["code"] == "NOTIFICATIONS_UNAVAILABLE", "\(extra): \(result)")
            #expect(result["error"]?["message"]?.stringValue?.hasPrefix("NOTIFICATIONS_UNAVAILABLE:") == true, "\(extra): \(result)")
            if !extra.isEmpty {
                let empty = try #require(try await Self.control(
                    h, #"{"cmd":"node-invoke","command":"system.notify","params":{"title":""},"timeoutMs":15000}"#)["result"])
                #expect(empty["error"]?["code"] == "NOTIFICATIONS_UNAVAILABLE", "\(empty)")
            }
            #expect(try await Self.control(h, "violations")["count"] == 0)
        }
    }

    @Test(.requires(.builtBinary)) func `in realtime mode approvals and notifications show too, and push-to-talk is neither declared nor run`() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let h = try await DaemonHarness.make(environment: ["DBUS_SESSION_BUS_ADDRESS": server.busAddress])
        defer { h.tearDown() }
        _ = try await h.start(["--mode", "realtime", "--idle"] + (try h.fileDevices))
        #expect(try await h.eventually { try await h.status()?.gateway.connected == true }, "the daemon did not connect: \(h.log)")
        let shown = try #require(try await Self.control(
            h, #"{"cmd":"node-invoke","command":"system.notify","params":{"title":"Realtime","body":"Done"},"timeoutMs":15000}"#)["result"])
        #expect(shown["ok"] == true, "\(shown)")
        #expect(server.notifications.last?.summary == "Realtime")
        // Realtime mode's node declares no talk.ptt.*, so the Gateway will not offer it; a forced invoke reaches the
        // node, which refuses a command it did not declare.
        let undeclared = await #expect(throws: (any Error).self) {
            try await Self.control(h, #"{"cmd":"node-invoke","command":"talk.ptt.start","timeoutMs":15000}"#)
        }
        #expect("\(undeclared.map { String(describing: $0) } ?? "")".contains("did not declare talk.ptt.start"), "\(String(describing: undeclared))")
        let ptt = try #require(try await Self.control(
            h, #"{"cmd":"node-invoke","command":"talk.ptt.start","force":true,"timeoutMs":15000}"#)["result"])
        #expect(ptt["ok"] == false)
        #expect(ptt["error"]?["message"] == "command not declared by this node: talk.ptt.start", "\(ptt)")
        _ = try await Self.control(h, #"{"cmd":"approval-request","command":"make install"}"#)
        #expect(try await h.eventually { try await h.status()?.state == "approval needed" })
        #expect(await server.wait { calls in calls.contains { $0.body.hasPrefix("make install") } })
    }
}
