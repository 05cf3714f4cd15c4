import Foundation
import SessionBridge
import TalkService

/// A served session with the daemon's approvals and notifications around it: the status says "approval needed"
/// over everything while one waits, `events` subscribers hear the approvals come and go, and `notify` shows a
/// notification as the node's `system.notify` would. Everything else is the inner session's.
actor DeskSession<Inner: ServedSession>: ServedSession {
    let inner: Inner
    private let approvals: ApprovalDesk?
    private let notifications: NotificationDesk
    nonisolated let events: AsyncStream<SessionEvent>
    private let merging: Task<Void, Never>

    init(inner: Inner, approvals: ApprovalDesk?, notifications: NotificationDesk) {
        self.inner = inner
        self.approvals = approvals
        self.notifications = notifications
        let (stream, sink) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(1024))
        events = stream
        merging = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await event in inner.events { sink.yield(event) } }
                if let approvals { group.addTask { for await event in approvals.events { sink.yield(event) } } }
            }
            sink.finish()
        }
    }

    func watchGateway() async { await inner.watchGateway() }

    func close() async {
        await inner.close()
        merging.cancel()
    }

    func reload(_ config: ServiceConfig, flagKeys: Set<String>) async { await inner.reload(config, flagKeys: flagKeys) }
    func pause() async throws { try await inner.pause() }
    func resume() async throws { try await inner.resume() }
    func reconnect() async throws { try await inner.reconnect() }
    func talkStart() async throws { try await inner.talkStart() }
    func talkStop() async throws { try await inner.talkStop() }
    func say(_ text: String) async throws { try await inner.say(text) }
    func pushToTalk(_ action: PushToTalkAction) async throws { try await inner.pushToTalk(action) }

    func snapshot() async -> SessionSnapshot {
        var snapshot = await inner.snapshot()
        if snapshot.attention == nil, let attention = await approvals?.attention() { snapshot.attention = attention }
        return snapshot
    }

    func notify(title: String, body: String, priority: String?) async throws -> ControlJSON {
        var params: [String: JSONValue] = ["title": .string(title), "body": .string(body)]
        if let priority { params["priority"] = .string(priority) }
        switch await notifications.handle(params: .object(params)) {
        case .success: return .object(["ok": .bool(true)])
        case .failure(let failure): throw ControlError(code: failure.code, message: failure.message)
        }
    }
}
