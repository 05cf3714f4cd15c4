import Desktop
import Foundation
import SessionBridge
import TalkLogging

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

    func desks(gateway: GatewaySession, speaker: NotificationDesk.Speaker?, logger: Logger) -> Desks {
        let notifier = DesktopNotifier(logger: logger)
        let approvals = ApprovalDesk(client: ApprovalClient(connection: gateway.operatorConnection, logger: logger),
                                     notifier: notifier, logger: logger)
        let notifications = NotificationDesk(notifier: notifier, speaker: speaker, settings: settings, logger: logger)
        return Desks(approvals: approvals, notifications: notifications, task: Task { await approvals.run() })
    }
}
