import Foundation
import TalkLogging

/// Maps control requests to the session and the status: the daemon's side of every CLI client command.
package struct ControlService: Sendable {
    package let session: any ControlledSession
    package let status: StatusPublisher
    /// `stop`: the daemon shuts down cleanly after answering.
    package let onStop: @Sendable () -> Void

    /// `config`: the configuration in force (values and where each came from).
    package let config: @Sendable () -> ControlJSON

    package init(session: any ControlledSession, status: StatusPublisher, onStop: @escaping @Sendable () -> Void,
                 config: @escaping @Sendable () -> ControlJSON = { .object([:]) }) {
        self.session = session
        self.status = status
        self.onStop = onStop
        self.config = config
    }

    package static let commands = ["status", "pause", "resume", "reconnect", "talk.start", "talk.stop", "say", "ptt",
                                   "notify", "events", "config", "stop", "ping"]

    package func handle(_ request: ControlRequest) async -> ControlServer.Reply {
        let outcome: Result<ControlJSON, ControlError>
        do {
            switch request.cmd {
            case "ping": outcome = .success(.string("pong"))
            case "config": outcome = .success(config())
            case "status": outcome = .success(try ControlJSON.from(await status.current))
            case "events":
                return .subscribe(ControlResponse(id: request.id, outcome: .success(try ControlJSON.from(await status.current))))
            case "pause": try await session.pause(); outcome = .success(.null)
            case "resume": try await session.resume(); outcome = .success(.null)
            case "reconnect": try await session.reconnect(); outcome = .success(.null)
            case "talk.start": try await session.talkStart(); outcome = .success(.null)
            case "talk.stop": try await session.talkStop(); outcome = .success(.null)
            case "say":
                guard let text = request.args["text"]?.stringValue, !text.isEmpty else {
                    throw ControlError.badArgs("say needs args.text, a non-empty string")
                }
                try await session.say(text)
                outcome = .success(.null)
            case "ptt":
                guard let action = request.args["action"]?.stringValue.flatMap(PushToTalkAction.init(rawValue:)) else {
                    throw ControlError.badArgs("ptt needs args.action: start, stop or once")
                }
                try await session.pushToTalk(action)
                outcome = .success(.null)
            case "notify":
                let title = request.args["title"]?.stringValue ?? "", body = request.args["body"]?.stringValue ?? ""
                guard title.utf8.count <= 4096, body.utf8.count <= 16384 else { throw ControlError.badArgs("notify: title or body too long") }
                outcome = .success(try await session.notify(title: title, body: body, priority: request.args["priority"]?.stringValue))
            case "stop":
                onStop()
                outcome = .success(.null)
            default: outcome = .failure(.unknownCommand(request.cmd))
            }
        } catch let error as ControlError {
            outcome = .failure(error)
        } catch {
            outcome = .failure(ControlError(code: "failed", message: String(describing: error)))
        }
        if case .success = outcome, !["status", "ping", "config"].contains(request.cmd) {
            await status.update(await session.snapshot())
        }
        return .respond(ControlResponse(id: request.id, outcome: outcome))
    }

    /// Relays the session's events to subscribers and refreshes the status after each one.
    package func relayEvents(to server: ControlServer) async {
        for await event in session.events {
            var fields: [String: ControlJSON] = ["event": .string(event.kind)]
            // Shortened like the status: a line over a subscriber's output limit would disconnect every subscriber.
            for (k, v) in event.detail.prefix(Self.maxEventFields) where k != "event" {
                fields[ServiceStatus.shortened(k, limit: ServiceStatus.maxNameCharacters)] =
                    .string(ServiceStatus.shortened(v, limit: Self.maxEventFieldCharacters))
            }
            server.broadcast(.object(fields))
            await status.update(await session.snapshot())
        }
    }

    /// The most fields of one event, and characters of one field, broadcast to subscribers.
    static let maxEventFields = 32
    static let maxEventFieldCharacters = 4000

    /// The event line each published status becomes.
    package static func statusEvent(_ status: ServiceStatus) -> ControlJSON {
        .object(["event": .string("status"), "status": (try? ControlJSON.from(status)) ?? .null])
    }
}
