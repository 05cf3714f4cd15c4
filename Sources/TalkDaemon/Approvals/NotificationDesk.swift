import Desktop
import Foundation
import SessionBridge
import TalkLogging

/// What the daemon does with a notification (the node's `system.notify`, and `notify`): shows it on the desktop
/// through libnotify (passive → low urgency, active → normal, timeSensitive → critical, as upstream's Linux node
/// maps them) and, while Talk is active and the priority is not passive, has it spoken at the loop's next pause.
/// Its answers are upstream's: `{ok: true}`, `NOTIFICATIONS_DISABLED`, `NOTIFICATIONS_UNAVAILABLE`,
/// `INVALID_REQUEST: empty notification`.
actor NotificationDesk {
    struct Settings: Sendable {
        /// `--no-notifications`: every notification is refused with `NOTIFICATIONS_DISABLED`.
        var enabled = true
        /// `--no-speak-notifications`: shown only.
        var speak = true
    }

    /// Speaks a notice at the loop's next pause; false when the loop cannot (Talk off). Nil: no voice here.
    typealias Speaker = @Sendable (String) async -> Bool

    private let notifier: DesktopNotifier?
    private let speaker: Speaker?
    private let settings: Settings
    private let logger: Logger
    private(set) var shown = 0
    private(set) var spoken = 0

    init(notifier: DesktopNotifier?, speaker: Speaker?, settings: Settings, logger: Logger) {
        self.notifier = notifier
        self.speaker = speaker
        self.settings = settings
        self.logger = logger
    }

    /// The node command's handler.
    nonisolated var nodeHandler: NodeCommandHandler {
        { params in await self.handle(params: params) }
    }

    func handle(params: JSONValue?) async -> Result<JSONValue, NodeCommandFailure> {
        guard settings.enabled else { return .failure(.notificationsDisabled) }
        let server = await notifier?.serverInfo()
        let canSpeak = settings.speak && speaker != nil
        guard server != nil || canSpeak else { return .failure(.notificationsUnavailable) }
        let request: SystemNotifyRequest
        do { request = try SystemNotifyRequest(params: params) } catch { return .failure(error) }
        return await deliver(request, serverPresent: server != nil)
    }

    private func deliver(_ request: SystemNotifyRequest, serverPresent: Bool) async -> Result<JSONValue, NodeCommandFailure> {
        var delivered = false
        if serverPresent, let notifier {
            let urgency: DesktopNotifier.Urgency = switch request.priority {
            case .passive: .low
            case .active: .normal
            case .timeSensitive: .critical
            }
            let title = request.title.isEmpty ? "OpenClaw" : request.title
            do {
                try await notifier.show(.init(title: title, body: request.body, urgency: urgency, silent: request.isSilent,
                                              category: "im.received"))
                shown += 1
                delivered = true
            } catch {
                logger.info("notification not shown", metadata: ["error": "\(error)"])
            }
        }
        if settings.speak, request.priority != .passive, let speaker {
            let words = [request.title, request.body].filter { !$0.isEmpty }.joined(separator: ". ")
            if await speaker(words) {
                spoken += 1
                delivered = true
            }
        }
        logger.notice("notification", metadata: ["notify.priority": "\(request.priority.rawValue)", "notify.delivered": "\(delivered)"])
        return delivered ? .success(SystemNotifyRequest.okPayload) : .failure(.notificationsUnavailable)
    }
}
