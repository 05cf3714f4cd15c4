import Foundation
import TalkLogging

/// Owns the published status: picks what is shown (most urgent wins), keeps the stale dates, and
/// publishes every change to status.json and the control socket. A heartbeat renews the stale date
/// while a Talk session is active, as OpenClaw's voice Live Activity does, so a frozen daemon is
/// never shown as live: once it stops beating, readers see `staleAt` pass.
package actor StatusPublisher {
    package struct Settings: Sendable, Equatable {
        package var heartbeatSeconds: Double = 240
        package var staleAfterSeconds: Double = 300
        package var connectingStaleSeconds: Double = 120
        package init() {}
    }

    package struct Hooks: Sendable {
        /// Where a published status goes besides status.json (the control socket's subscribers).
        package var publish: @Sendable (ServiceStatus) -> Void = { _ in }
        /// Each heartbeat: the daemon wires this to SessionBridge's `node.presence.alive` beacon.
        package var alive: @Sendable () async -> Void = {}
        package init() {}
    }

    private var settings: Settings
    private let now: @Sendable () -> Date
    private let pid: Int32
    private let file: StatusFile?
    private let hooks: Hooks
    private let logger: Logger

    private var snapshot = SessionSnapshot()
    private var heartbeatAt: Date?
    private var connectionStaleAt: Date?
    /// The presence beacon on its way, if any: a network round trip (up to 15 s) that no status update waits for.
    private var beacon: Task<Void, Never>?

    package init(settings: Settings = Settings(), now: @escaping @Sendable () -> Date = Date.init,
                 pid: Int32 = getpid(), file: StatusFile?, hooks: Hooks = Hooks(), logger: Logger) {
        self.settings = settings
        self.now = now
        self.pid = pid
        self.file = file
        self.hooks = hooks
        self.logger = logger
    }

    package var current: ServiceStatus { compose(at: now()) }

    /// A reloaded configuration's heartbeat and stale periods, from the next beat on.
    package func reconfigure(_ next: Settings) { settings = next }

    /// Takes a fresh snapshot of the session and publishes the result.
    package func update(_ next: SessionSnapshot) async {
        let t = now()
        let wasActive = snapshot.talkActive
        let wasWaiting = Self.isWaiting(snapshot.connection)
        snapshot = next
        if Self.isWaiting(next.connection) {
            if !wasWaiting || connectionStaleAt == nil { connectionStaleAt = t + settings.connectingStaleSeconds }
        } else {
            connectionStaleAt = nil
        }
        if next.talkActive && !wasActive {
            await beat(at: t)
        } else {
            if !next.talkActive { heartbeatAt = nil }
            publish(at: t)
        }
    }

    /// Called on a timer: renews the stale date when a heartbeat is due.
    package func tick() async {
        let t = now()
        guard snapshot.talkActive else { return }
        if let last = heartbeatAt, t.timeIntervalSince(last) < settings.heartbeatSeconds { return }
        await beat(at: t)
    }

    /// Ticks until cancelled; `sleep` is injected so tests need not wait.
    package func run(every interval: Duration = .seconds(1),
                     sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) async {
        while !Task.isCancelled {
            await tick()
            do { try await sleep(interval) } catch { return }
        }
    }

    /// Renews the stale date and publishes now; the presence beacon goes out on its own, one at a time, so a
    /// command that changed the status (`talk start`) is answered without waiting for the Gateway.
    private func beat(at t: Date) async {
        heartbeatAt = t
        publish(at: t)
        guard beacon == nil else { return }
        let alive = hooks.alive
        beacon = Task {
            await alive()
            self.beaconDone()
        }
    }

    private func beaconDone() { beacon = nil }

    /// Returns once the beacon on its way (if any) is sent or failed.
    package func beaconSent() async { await beacon?.value }

    private func publish(at t: Date) {
        let status = compose(at: t)
        if let file {
            do { try file.write(status) } catch { logger.error("status file: \(error)") }
        }
        hooks.publish(status)
    }

    /// A Gateway URL without userinfo, query or fragment: a token pasted into the URL must not reach a
    /// world-readable bar or a log.
    static func redacted(_ url: String) -> String {
        guard var parts = URLComponents(string: url), parts.host != nil else { return "(unparsable URL)" }
        parts.user = nil
        parts.password = nil
        parts.query = nil
        parts.fragment = nil
        return parts.string ?? "(unparsable URL)"
    }

    private static func isWaiting(_ phase: SessionSnapshot.ConnectionPhase) -> Bool {
        phase == .connecting || phase == .reconnecting
    }

    private func compose(at t: Date) -> ServiceStatus {
        let shown = StatusArbiter.shown(snapshot)
        let heartbeatStale = heartbeatAt.map { $0 + settings.staleAfterSeconds }
        let staleAt: Date? = switch shown {
        case .connection where Self.isWaiting(snapshot.connection): connectionStaleAt
        case .connection: nil
        default: snapshot.talkActive ? heartbeatStale : connectionStaleAt
        }
        return ServiceStatus(
            state: shown.word(snapshot),
            talk: .init(active: snapshot.talkActive, mode: snapshot.talkMode, sessionKey: snapshot.sessionKey),
            gateway: .init(
                url: snapshot.gatewayURL.map(Self.redacted), connected: snapshot.connection == .connected,
                protocol: snapshot.protocolVersion, version: snapshot.serverVersion,
                state: snapshot.connection.rawValue, nextRetryAt: snapshot.nextRetryAt, staleAt: connectionStaleAt),
            audio: .init(source: snapshot.audioSource, sink: snapshot.audioSink, uplink: snapshot.uplink,
                         uplinkBytesPerSecond: snapshot.uplinkBytesPerSecond, echoCancellation: snapshot.echoCancellation),
            pid: pid, heartbeatAt: heartbeatAt, staleAt: staleAt, stale: staleAt.map { $0 < t } ?? false,
            lastTranscript: snapshot.lastTranscript, lastReply: snapshot.lastReply, error: snapshot.error).bounded()
    }
}

/// OpenClaw's order when several things want to be shown: attention > running tool > voice > connection.
package enum StatusArbiter: Equatable, Sendable {
    case attention, tool, voice, connection

    package static func shown(_ s: SessionSnapshot) -> StatusArbiter {
        if s.attention != nil { return .attention }
        if s.runningTool != nil { return .tool }
        if s.talkActive { return .voice }
        return .connection
    }

    func word(_ s: SessionSnapshot) -> String {
        switch self {
        // What needs the user, in their words ("approval needed"), as the Live Activity shows it.
        case .attention: s.attention.map { ServiceStatus.shortened($0, limit: ServiceStatus.maxNameCharacters) } ?? "attention"
        case .tool: "toolRunning"
        case .voice: s.voice?.rawValue ?? "active"
        case .connection: s.connection == .connected ? "idle" : s.connection.rawValue
        }
    }
}
