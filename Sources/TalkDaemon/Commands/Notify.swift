import Desktop
import Foundation
import SessionBridge
import TalkLogging
import TalkService

extension OpenClawTalk {
    /// The local test of `system.notify`: a running daemon shows the notification as the node command would (and
    /// speaks it at the next pause while Talk is on); without one, it is shown here.
    struct Notify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "notify",
            abstract: "Show a notification as the Gateway's system.notify would (spoken too while Talk is on).",
            options: [.option("priority", value: "passive|active|timeSensitive",
                              help: "passive (low urgency, never spoken), active (default) or timeSensitive (critical).")],
            arguments: [ArgumentSpec(name: "title", help: "The title."),
                        ArgumentSpec(name: "body", help: "The text.", optional: true)])

        var title: String
        var body: String
        var priority: SystemNotifyRequest.Priority

        init(_ parsed: ParsedArguments) throws {
            title = parsed.argument("title") ?? ""
            body = parsed.argument("body") ?? ""
            let word = parsed.option("priority") ?? "active"
            guard let priority = SystemNotifyRequest.Priority(rawValue: word) else {
                throw ValidationError("'\(word)' is not a priority; use passive, active or timeSensitive")
            }
            self.priority = priority
            if title.trimmingCharacters(in: .whitespaces).isEmpty, body.trimmingCharacters(in: .whitespaces).isEmpty {
                throw ValidationError("Nothing to show: give a title or a body")
            }
        }

        func run() async throws {
            let daemonAnswer: ClientOutcome?
            do {
                let response = try ControlClient(path: RuntimePaths().socketPath).call(
                    "notify", args: ["title": .string(title), "body": .string(body), "priority": .string(priority.rawValue)])
                switch response.outcome {
                case .success: daemonAnswer = ClientOutcome(stdout: "Shown by the daemon.\n")
                case .failure(let e): daemonAnswer = ClientOutcome(stderr: "Error: \(e.message)\n", exitCode: 1)
                }
            } catch .noDaemon {
                daemonAnswer = nil   // shown here, as the daemon would; nothing is spoken
            } catch {
                daemonAnswer = ClientOutcome(stderr: "Error: \(error)\n", exitCode: error.exitCode)
            }
            if let daemonAnswer { return try daemonAnswer.emit() }
            let logger = Logger(label: "openclaw-talk.notify")
            let desk = NotificationDesk(notifier: DesktopNotifier(logger: logger), speaker: nil, settings: .init(), logger: logger)
            let params = SystemNotifyRequest(title: title, body: body, priority: priority).params
            switch await desk.handle(params: params) {
            case .success: StandardStream.write("Shown.\n", to: STDOUT_FILENO)
            case .failure(let failure): throw OperatorLink.Failure(description: failure.message)
            }
        }
    }
}
