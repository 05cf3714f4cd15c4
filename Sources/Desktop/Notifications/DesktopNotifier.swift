import CLibNotify
import Foundation
import TalkLogging

/// Desktop notifications through libnotify (the freedesktop.org notification server on the session bus), with
/// action buttons whose clicks come back as `ActionClick`s. Everything libnotify does happens on one thread of its
/// own (`GLibThread`); this object only hands work to it. Without a session bus or a notification server, `show`
/// throws `.unavailable` and `serverInfo()` is nil.
package final class DesktopNotifier: Sendable {
    package enum Urgency: Int32, Sendable, Equatable {
        case low = 0, normal = 1, critical = 2
    }

    package struct Notification: Sendable, Equatable {
        package var title: String
        package var body: String
        package var urgency: Urgency
        /// Buttons: (action key, label). The key comes back in `ActionClick`.
        package var actions: [(key: String, label: String)]
        package var silent: Bool
        /// Milliseconds before the server may drop it; nil leaves it to the server, 0 never.
        package var timeoutMs: Int32?
        /// A freedesktop category (`im.received`, ...), shown by some servers.
        package var category: String?

        package init(title: String, body: String, urgency: Urgency = .normal, actions: [(key: String, label: String)] = [],
                     silent: Bool = false, timeoutMs: Int32? = nil, category: String? = nil) {
            self.title = title
            self.body = body
            self.urgency = urgency
            self.actions = actions
            self.silent = silent
            self.timeoutMs = timeoutMs
            self.category = category
        }

        package static func == (a: Notification, b: Notification) -> Bool {
            a.title == b.title && a.body == b.body && a.urgency == b.urgency && a.silent == b.silent
                && a.actions.map(\.key) == b.actions.map(\.key) && a.actions.map(\.label) == b.actions.map(\.label)
                && a.timeoutMs == b.timeoutMs && a.category == b.category
        }
    }

    /// A shown notification, to close it later or match its clicks.
    package struct Handle: Sendable, Hashable {
        package let serial: Int
    }

    package struct ActionClick: Sendable, Equatable {
        package var handle: Handle
        package var action: String
    }

    package struct ServerInfo: Sendable, Equatable {
        package var name: String
        package var capabilities: [String]
        package var supportsActions: Bool { capabilities.contains("actions") }
    }

    package enum NotifyError: Error, Equatable, CustomStringConvertible {
        /// No session bus or no notification server answered.
        case unavailable(String)
        package var description: String {
            switch self {
            case .unavailable(let why): "no desktop notification server: \(why)"
            }
        }
    }

    private let thread: GLibThread
    private let state: State
    private let logger: Logger
    package let clicks: AsyncStream<ActionClick>

    package init(appName: String = "OpenClaw Talk", logger: Logger) {
        self.logger = logger
        thread = GLibThread(name: "libnotify")
        let (stream, continuation) = AsyncStream<ActionClick>.makeStream(bufferingPolicy: .bufferingNewest(64))
        clicks = stream
        state = State(clicks: continuation)
        let name = appName
        _ = thread.runSync { notify_init(name) }
    }

    /// The server's name and capabilities (`actions` when it shows buttons); nil when none answers.
    package func serverInfo() async -> ServerInfo? {
        await thread.run {
            var name: UnsafeMutablePointer<CChar>?
            var vendor: UnsafeMutablePointer<CChar>?
            var version: UnsafeMutablePointer<CChar>?
            var spec: UnsafeMutablePointer<CChar>?
            guard notify_get_server_info(&name, &vendor, &version, &spec) != 0 else { return nil }
            defer { [name, vendor, version, spec].forEach { clibnotify_free_string($0) } }
            var caps: [String] = []
            if let list = notify_get_server_caps() {
                var node: UnsafeMutablePointer<GList>? = list
                while let item = node {
                    if let data = item.pointee.data { caps.append(String(cString: data.assumingMemoryBound(to: CChar.self))) }
                    node = item.pointee.next
                }
                clibnotify_free_string_list(list)
            }
            return ServerInfo(name: name.map { String(cString: $0) } ?? "", capabilities: caps)
        }
    }

    /// Shows a notification; its buttons' clicks arrive in `clicks`.
    @discardableResult
    package func show(_ notification: Notification) async throws(NotifyError) -> Handle {
        let state = state
        let result: Result<Handle, NotifyError> = await thread.run {
            guard let n = notify_notification_new(notification.title, notification.body, nil) else {
                return .failure(.unavailable("libnotify made no notification"))
            }
            notify_notification_set_urgency(n, NotifyUrgency(UInt32(notification.urgency.rawValue)))
            if let timeout = notification.timeoutMs { notify_notification_set_timeout(n, timeout) }
            if notification.silent { clibnotify_set_bool_hint(n, "suppress-sound", 1) }
            if let category = notification.category { notify_notification_set_category(n, category) }
            let handle = state.register(n)
            for action in notification.actions {
                let box = Unmanaged.passRetained(ActionBox(state: state, handle: handle)).toOpaque()
                notify_notification_add_action(n, action.key, action.label, { _, key, data in
                    guard let data, let key else { return }
                    let box = Unmanaged<ActionBox>.fromOpaque(data).takeUnretainedValue()
                    box.state.clicked(box.handle, action: String(cString: key))
                }, box, { data in
                    if let data { Unmanaged<ActionBox>.fromOpaque(data).release() }
                })
            }
            let closedBox = Unmanaged.passRetained(ActionBox(state: state, handle: handle)).toOpaque()
            _ = clibnotify_connect_closed(n, { _, data in
                guard let data else { return }
                let box = Unmanaged<ActionBox>.fromOpaque(data).takeRetainedValue()
                box.state.closed(box.handle)
            }, closedBox)
            var error: UnsafeMutablePointer<GError>?
            guard notify_notification_show(n, &error) != 0 else {
                let why = error.map { String(cString: $0.pointee.message) } ?? "the notification server refused it"
                if let error { g_error_free(error) }
                state.forget(handle)
                Unmanaged<ActionBox>.fromOpaque(closedBox).release()
                return .failure(.unavailable(why))
            }
            return .success(handle)
        }
        switch result {
        case .success(let handle): return handle
        case .failure(let error):
            logger.info("desktop notification not shown", metadata: ["error": "\(error)"])
            throw error
        }
    }

    /// Closes a notification still shown (an approval decided elsewhere); nothing when it is gone.
    package func close(_ handle: Handle) async {
        let state = state
        await thread.run {
            guard let n = state.notification(handle) else { return }
            notify_notification_close(n, nil)
        }
    }

    /// The notifications shown and not closed yet, each kept (referenced) until the server says it closed, so its
    /// buttons still work: a notification dropped too early loses its action signals.
    private final class State: @unchecked Sendable {
        private var shown: [Int: UnsafeMutablePointer<NotifyNotification>] = [:]
        private var next = 0
        private let clicks: AsyncStream<ActionClick>.Continuation

        init(clicks: AsyncStream<ActionClick>.Continuation) { self.clicks = clicks }

        // All on the GLib thread.
        func register(_ n: UnsafeMutablePointer<NotifyNotification>) -> Handle {
            next += 1
            shown[next] = n
            return Handle(serial: next)
        }
        func notification(_ handle: Handle) -> UnsafeMutablePointer<NotifyNotification>? { shown[handle.serial] }
        func clicked(_ handle: Handle, action: String) { clicks.yield(ActionClick(handle: handle, action: action)) }
        func closed(_ handle: Handle) { forget(handle) }
        func forget(_ handle: Handle) {
            if let n = shown.removeValue(forKey: handle.serial) { clibnotify_notification_unref(n) }
        }
    }

    private final class ActionBox: @unchecked Sendable {
        let state: State
        let handle: Handle
        init(state: State, handle: Handle) {
            self.state = state
            self.handle = handle
        }
    }
}
