import AudioIO
import Foundation
import SessionBridge
import TalkLogging
import TalkSession

/// `run`'s last part, the same for both loops: the loop is served as the daemon (control socket, status, approvals
/// and notifications, the node's commands), started, and runs until the stop fires; every part it starts goes into
/// `services`, which stops them in reverse. Prints the loop's events as JSON lines if asked and counts turns for
/// `--max-turns` by the loop's own turn-ended events.
struct ServeSequence<Loop: TalkLoop> {
    var loop: Loop
    var daemon: DaemonRuntime
    var gateway: GatewaySession
    var devices: SessionAudio
    var names: DaemonStatusNames
    var desk: DeskOptions
    var json: Bool
    var idle: Bool
    var maxTurns: Int?
    var seconds: Double?
    var version: String
    /// What stderr says once the loop listens (not with Talk off).
    var greeting: String?
    /// Serves the node's commands (`talk.ptt.*` to the loop, `system.notify` to the notifications) until cancelled.
    var nodeCommands: @Sendable (NotificationDesk) -> Task<Void, Never>

    func run(services: ServiceGroup, stop: StopSignal, logger: Logger) async throws {
        // Approvals and notifications (issue 26): asked and spoken by the loop while Talk is on, else shown.
        let desks = desk.desks(gateway: gateway, loop: loop, logger: logger)
        services.started("approvals") { desks.task.cancel() }
        try services.checkNotStopped(before: "the control socket")
        let session = DaemonSession(loop: loop, gateway: gateway, names: names, echoCancellation: devices.echoCancellation, logger: logger)
        let host = try await daemon.serve(
            session: DeskSession(inner: session, approvals: desks.approvals, notifications: desks.notifications),
            gateway: gateway, version: version, displayName: gateway.displayName, stop: stop
        ).inner
        let (loop, json, maxTurns) = (loop, json, maxTurns)
        let printer = Task {
            var turns = 0
            for await event in loop.events {
                await host.observe(event)
                if json { StandardStream.write(event.jsonLine + "\n", to: STDOUT_FILENO) }
                if case .turnEnded = event.kind {
                    turns += 1
                    if let maxTurns, turns >= maxTurns { stop.fire("\(turns) turns") }
                }
            }
        }
        services.started("the Talk loop") {
            await loop.stop()
            await printer.value
        }
        if json { StandardStream.write(Self.echoCancellationEvent(devices) + "\n", to: STDOUT_FILENO) }
        await devices.startTrack()
        try services.checkNotStopped(before: "the Talk loop")
        try await loop.start(listening: !idle)
        let nodeCommands = nodeCommands(desks.notifications)
        services.started("node commands") { nodeCommands.cancel() }
        await daemon.ready()
        // After the start, so every event counts its milliseconds from the session's (and the tracks') start.
        let connection = Task {
            for await state in await gateway.operatorConnection.stateUpdates() {
                if case .connected = state {
                    await loop.connectionChanged(OpenClawTalk.Run.describe(state), connected: true)
                } else {
                    await loop.connectionChanged(OpenClawTalk.Run.describe(state), connected: false)
                }
            }
        }
        services.started("connection follower") { connection.cancel() }
        if let greeting, !idle { StandardStream.write(greeting + "\n", to: STDERR_FILENO) }
        let deadline = seconds.map { stop.deadline(seconds: $0) }
        let reason = await stop.wait()
        deadline?.cancel()
        logger.info("stopping", metadata: ["reason": "\(reason)"])
    }

    /// The event that opens `--json`'s stream: which echo cancellation runs (`mode`: webrtc, pulse or off).
    static func echoCancellationEvent(_ devices: SessionAudio, now: Date = Date()) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let object: [String: Any] = [
            "event": "echoCancellation", "time": formatter.string(from: now), "monotonicMs": 0,
            "mode": devices.echoCancelMode.rawValue, "detail": devices.echoCancellation,
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return #"{"event":"error","message":"an event could not be encoded"}"#
        }
        return String(decoding: data, as: UTF8.self)
    }
}
