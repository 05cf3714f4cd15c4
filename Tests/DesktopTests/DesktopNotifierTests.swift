import Foundation
import TalkLogging
import TalkTestSupport
import Testing

@testable import Desktop

/// libnotify against a real notification server (a test one, on a private session bus): what a desktop shows, and
/// a click on a button coming back. GDBus keeps one session bus per process, so the suite shares one server.
@Suite(.serialized) struct DesktopNotifierTests {
    static let server: NotificationServer? = {
        guard let server = try? NotificationServer() else { return nil }
        setenv("DBUS_SESSION_BUS_ADDRESS", server.busAddress, 1)
        return server
    }()

    static let notifier = DesktopNotifier(appName: "openclaw-talk tests", logger: Logger(label: "notify-test"))

    @Test func `a notification reaches the server with its urgency, buttons and silence`() async throws {
        let server = try #require(Self.server, "the test notification server did not start")
        let info = try #require(await Self.notifier.serverInfo(), "no notification server seen on the bus")
        #expect(info.name == "refnotify")
        #expect(info.supportsActions)
        let title = "Build \(UUID().uuidString.prefix(6))"
        try await Self.notifier.show(.init(title: title, body: "Done", urgency: .critical,
                                           actions: [(key: "allow-once", label: "Allow once"), (key: "deny", label: "Deny")],
                                           silent: true))
        let call = try #require(server.notifications.last { $0.summary == title })
        #expect(call.body == "Done")
        #expect(call.urgency == 2)
        #expect(call.actions == [["allow-once", "Allow once"], ["deny", "Deny"]])
        #expect(call.hints["suppress-sound"] == "true" || call.hints["suppress-sound"] == "1")
    }

    @Test func `a click on a button comes back for that notification`() async throws {
        let server = try #require(Self.server, "the test notification server did not start")
        let clicks = Self.notifier.clicks
        let first = try await Self.notifier.show(.init(title: "First", body: "a", actions: [(key: "deny", label: "Deny")]))
        let second = try await Self.notifier.show(.init(title: "Second", body: "b", actions: [(key: "allow-once", label: "Allow once")]))
        let id = try #require(server.notifications.last { $0.summary == "Second" }?.id)
        server.click(id, "allow-once")
        var iterator = clicks.makeAsyncIterator()
        let click = await iterator.next()
        #expect(click == DesktopNotifier.ActionClick(handle: second, action: "allow-once"))
        #expect(click?.handle != first)
    }

    @Test func `closing a notification asks the server to take it down`() async throws {
        let server = try #require(Self.server, "the test notification server did not start")
        let handle = try await Self.notifier.show(.init(title: "Closing", body: "soon", actions: [(key: "deny", label: "Deny")]))
        let id = try #require(server.notifications.last { $0.summary == "Closing" }?.id)
        await Self.notifier.close(handle)
        #expect(await server.wait { calls in calls.contains { $0.call == "CloseNotification" && $0.id == id } })
    }
}
