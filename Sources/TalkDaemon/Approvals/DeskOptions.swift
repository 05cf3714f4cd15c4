import Desktop
import Foundation
import SessionBridge
import TalkLogging
import TalkSession

/// `run`'s switches for notifications, and the wiring of the daemon's approvals and notifications around the loop.
struct DeskOptions: Sendable {
    static let all: [OptionSpec] = [
        .flag("no-notifications", help: "Refuse the Gateway's system.notify (NOTIFICATIONS_DISABLED); approvals still show."),
        .flag("no-speak-notifications", help: "Show the Gateway's notifications without speaking them while Talk is on."),
    ]

    var settings = NotificationDesk.Settings()

    init(_ parsed: ParsedArguments) {
        settings.enabled = !parsed.flag("no-notifications")
        settings.speak = !parsed.flag("no-speak-notifications")
    }

    /// The desks and the task that runs the approvals until cancelled.
    struct Desks: Sendable {
        let approvals: ApprovalDesk
        let notifications: NotificationDesk
        let task: Task<Void, Never>
    }

    /// The node's commands in realtime mode: `system.notify` shown. The node declares no push-to-talk there
    /// (`GatewaySession.nodeProfile`), so the router refuses `talk.ptt.*` as undeclared should a Gateway send one.
    static func realtimeNodeRouter(_ gateway: GatewaySession, notifications: NotificationDesk, logger: Logger) -> NodeCommandRouter {
        struct NoPushToTalk: Error, CustomStringConvertible {
            var description: String { "push-to-talk is not available in realtime mode: the relay hears by itself" }
        }
        let nodeId = (try? DeviceIdentity.loadOrCreate(paths: StoragePaths.standard()).deviceId) ?? ""
        return NodeCommandRouter(node: gateway.node, nodeId: nodeId, declared: gateway.nodeProfile.commands,
                                 handler: { _, _ in throw NoPushToTalk() }, others: ["system.notify": notifications.nodeHandler],
                                 logger: logger)
    }

    /// The desks around `loop`: it asks about approvals aloud and speaks notifications at its next pause (each
    /// refused by the loop while Talk is off or paused, and by the realtime loop, which then only shows them).
    func desks<Loop: TalkLoop>(gateway: GatewaySession, loop: Loop, logger: Logger) -> Desks {
        let notifier = DesktopNotifier(logger: logger)
        let approvals = ApprovalDesk(client: ApprovalClient(connection: gateway.operatorConnection, logger: logger),
                                     notifier: notifier, voice: ApprovalDesk.Voice(loop), logger: logger)
        let notifications = NotificationDesk(notifier: notifier, speaker: { await loop.speakNotice($0) }, settings: settings,
                                             logger: logger)
        return Desks(approvals: approvals, notifications: notifications, task: Task { await approvals.run() })
    }
}
