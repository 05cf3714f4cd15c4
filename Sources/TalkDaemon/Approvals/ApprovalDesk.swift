import Desktop
import Foundation
import SessionBridge
import TalkLogging
import TalkService
import TalkSession

/// The daemon's approvals: it follows them (`ApprovalClient` on the operator socket), says "approval needed" in the
/// status while one waits (over everything else, as the iOS Live Activity does), tells `events` subscribers, has the
/// Talk loop ask about each aloud, and leaves a desktop notification whose buttons are the decisions the request
/// allows when no voice asks (Talk off, or the spoken prompt left it pending). A click, or an answer by voice, decides
/// that approval, and only that one; a decision made elsewhere, or the expiry, closes the notification and withdraws
/// the question.
actor ApprovalDesk: ApprovalAnswers {
    /// The Talk loop's spoken prompt: `ask` is false when the loop cannot ask now (Talk off or paused, realtime).
    struct Voice: Sendable {
        var ask: @Sendable (PendingApproval, any ApprovalAnswers) async -> Bool
        var gone: @Sendable (String) async -> Void

        init<Loop: TalkLoop>(_ loop: Loop) {
            ask = { approval, answers in await loop.ask(approval, answers: answers) }
            gone = { id in await loop.approvalGone(id: id) }
        }
    }

    let client: ApprovalClient
    private let notifier: DesktopNotifier?
    private let voice: Voice?
    private let logger: Logger
    private var shown: [String: DesktopNotifier.Handle] = [:]
    private var approvalOf: [DesktopNotifier.Handle: String] = [:]
    /// Approval events for `events` subscribers.
    nonisolated let events: AsyncStream<SessionEvent>
    private let sink: AsyncStream<SessionEvent>.Continuation

    /// The status word while an approval waits.
    static let attention = "approval needed"

    init(client: ApprovalClient, notifier: DesktopNotifier?, voice: Voice? = nil, logger: Logger) {
        self.client = client
        self.notifier = notifier
        self.voice = voice
        self.logger = logger
        (events, sink) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(256))
    }

    /// Follows the approvals and the notification buttons until cancelled.
    func run() async {
        let changes = await client.changes()
        let client = client
        let clicks = notifier?.clicks
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            group.addTask { for await change in changes { await self.changed(change) } }
            if let clicks { group.addTask { for await click in clicks { await self.clicked(click) } } }
        }
        sink.finish()
    }

    /// "approval needed" while one waits.
    func attention() async -> String? { await client.approvals.isEmpty ? nil : Self.attention }

    private func changed(_ change: ApprovalClient.Change) async {
        switch change {
        case .requested(let approval):
            sink.yield(SessionEvent(kind: "approvalRequested", detail: [
                "id": approval.id, "kind": approval.kind.rawValue, "summary": approval.headline,
                "allowedDecisions": approval.allowedDecisions.map(\.rawValue).joined(separator: ","),
                "expiresAtMs": "\(approval.expiresAtMs)",
            ]))
            if let voice, await voice.ask(approval, self) { return }
            await leaveNotification(for: approval)
        case .resolved(let id, let decision, let by, let byUs):
            await voice?.gone(id)
            await closeNotification(of: id)
            var detail = ["id": id, "decision": decision ?? "", "byUs": "\(byUs)"]
            if let by { detail["resolvedBy"] = by }
            sink.yield(SessionEvent(kind: "approvalResolved", detail: detail))
        case .expired(let id):
            await voice?.gone(id)
            await closeNotification(of: id)
            sink.yield(SessionEvent(kind: "approvalExpired", detail: ["id": id]))
        }
    }

    /// `ApprovalAnswers`: the spoken prompt's decision, for exactly the approval it read out. Refused (allow always
    /// not offered, the socket failed), nothing is decided: the approval stays pending, with a notification
    /// offering what the Gateway still takes, as when the voice gets no answer.
    func resolve(id: String, decision: ApprovalDecision) async -> ApprovalResolveError? {
        do {
            _ = try await client.resolve(id: id, decision: decision, exact: true)
            return nil
        } catch {
            logger.warning("approval decision by voice failed", metadata: ["approval.id": "\(id)", "error": "\(error)"])
            if let still = await client.approval(id: id) { await leaveNotification(for: still) }
            return error
        }
    }

    /// `ApprovalAnswers`: nothing was decided by voice; the approval stays pending, with its notification.
    func leavePending(_ approval: PendingApproval) async {
        guard await client.approvals.contains(where: { $0.id == approval.id }) else { return }
        await leaveNotification(for: approval)
    }

    /// A notification with the allowed decisions as buttons.
    func leaveNotification(for approval: PendingApproval) async {
        guard let notifier, shown[approval.id] == nil else { return }
        let labels: [ApprovalDecision: String] = [.allowOnce: "Allow once", .allowAlways: "Allow always", .deny: "Deny"]
        let title = approval.kind == .exec ? "Approval needed: the agent wants to run a command" : "Approval needed: \(approval.headline)"
        var body = approval.kind == .exec ? approval.headline : (approval.description ?? approval.toolName ?? "")
        if let cwd = approval.cwd { body += "\nin \(cwd)" }
        do {
            let handle = try await notifier.show(.init(
                title: title, body: String(body.prefix(1000)), urgency: .critical,
                actions: approval.allowedDecisions.map { (key: $0.rawValue, label: labels[$0] ?? $0.rawValue) },
                timeoutMs: 0, category: "x-openclaw.approval"))
            shown[approval.id] = handle
            approvalOf[handle] = approval.id
        } catch {
            logger.info("approval notification not shown", metadata: ["approval.id": "\(approval.id)", "error": "\(error)"])
        }
    }

    private func closeNotification(of id: String) async {
        guard let handle = shown.removeValue(forKey: id) else { return }
        approvalOf[handle] = nil
        await notifier?.close(handle)
    }

    /// A button: the decision for the approval that notification showed, never another. Refused while the approval
    /// is still pending, a new notification offers what the Gateway still takes (the click took the old one away, or,
    /// on a server that keeps clicked notifications, it is closed).
    private func clicked(_ click: DesktopNotifier.ActionClick) async {
        guard let id = approvalOf[click.handle], let decision = ApprovalDecision(rawValue: click.action) else { return }
        do {
            try await client.resolve(id: id, decision: decision, exact: true)
        } catch {
            logger.warning("approval decision from the notification failed", metadata: ["approval.id": "\(id)", "error": "\(error)"])
            try? await notifier?.show(.init(title: "Approval not decided", body: "\(error)", urgency: .normal))
            if let still = await client.approval(id: id) {
                await closeNotification(of: id)
                await leaveNotification(for: still)
            }
        }
    }
}
