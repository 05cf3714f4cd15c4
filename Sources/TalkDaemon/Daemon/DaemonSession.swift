import Foundation
import SessionBridge
import TalkLogging
import TalkService
import TalkSession

/// A running Talk loop as the service plane sees it: `ControlledSession` over a `TalkLoop` (the native loop or the
/// realtime relay) and the Gateway sockets. It lives in the executable, not in TalkSession or TalkService, because
/// it is wiring that joins the loop, SessionBridge and the service plane, which the libraries may not do to each
/// other (TalkService imports neither; TalkSession stays free of the service plane, so the loop is tested without it).
///
/// It keeps the snapshot the status shows from what it observes: the loop's events (handed in by the serve sequence,
/// which owns the event stream) and both Gateway sockets' states. What a loop cannot do, it refuses itself
/// (`TalkLoopRefusal`); the client reads the reason.
actor DaemonSession<Loop: TalkLoop>: ServedSession {
    nonisolated let events: AsyncStream<SessionEvent>
    private let sink: AsyncStream<SessionEvent>.Continuation
    private let loop: Loop
    private let gateway: GatewaySession
    private let logger: Logger
    private var tracker: SessionStatusTracker
    private var watchers: [Task<Void, Never>] = []

    init(loop: Loop, gateway: GatewaySession, names: DaemonStatusNames, echoCancellation: String? = nil, logger: Logger) {
        self.loop = loop
        self.gateway = gateway
        self.logger = logger
        (events, sink) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(1024))
        tracker = SessionStatusTracker(gatewayURL: names.gatewayURL, audioSource: names.audioSource, audioSink: names.audioSink,
                                       echoCancellation: echoCancellation)
    }

    /// Follows both sockets' states until `close()`.
    func watchGateway() {
        watchers += SessionStatusTracker.watch(gateway) { role, state, hello in await self.connection(role, state, hello: hello) }
    }

    func close() {
        watchers.forEach { $0.cancel() }
        sink.finish()
    }

    /// A reloaded configuration's voice and rate, unless the command line set them.
    func reload(_ config: ServiceConfig, flagKeys: Set<String>) async {
        await loop.setVoice(flagKeys.contains("voice") ? nil : config.text("voice"),
                            rate: flagKeys.contains("rate") ? nil : config.integer("rate"))
    }

    // MARK: - What the loop did

    /// One event of the loop (the serve sequence's event reader hands each one over).
    func observe(_ event: TalkEvent) {
        // The realtime relay's words for what was said are the transcript it answers (the native loop's is the one sent).
        if loop.kind == .realtime, case .finalTranscript(let text, _, _, _, _) = event.kind {
            tracker.snap.lastTranscript = text
            tracker.talkError = nil
        }
        tracker.observe(event)
        sink.yield(SessionEvent(kind: event.name, detail: SessionStatusTracker.fields(of: event)))
    }

    private func connection(_ role: GatewayRole, _ state: SessionStatusTracker.SocketState, hello: HelloOk?) {
        sink.yield(tracker.connection(role, state, hello: hello))
    }

    // MARK: - ControlledSession

    func pause() async throws { try await loop.pause() }
    func resume() async throws { try await loop.resume() }
    func talkStart() async throws { try await loop.activate() }
    func talkStop() async throws { await loop.deactivate() }
    func say(_ text: String) async throws { try await loop.type(text) }
    /// Notifications are `DeskSession`'s, which wraps this one when the daemon serves it.
    func notify(title: String, body: String, priority: String?) async throws -> ControlJSON {
        throw ControlError(code: "unsupported", message: "this session shows no notifications")
    }

    /// The loop's push-to-talk, with the answers a person must hear about (nothing to stop, Talk off) as refusals.
    func pushToTalk(_ action: PushToTalkAction) async throws {
        guard let command = PushToTalkCommand(rawValue: "talk.ptt." + action.rawValue) else {
            throw TalkLoopRefusal("unknown push-to-talk action \(action.rawValue)")
        }
        if command == .once {
            // `once` ends with the first utterance (at most 12 s): its outcome is a `pushToTalk` event, and the
            // client is answered now, not after its own read timeout.
            try await loop.checkPushToTalk()
            let loop = loop
            Task { _ = try? await loop.pushToTalk(command) }
            return
        }
        let result = try await loop.pushToTalk(command)
        switch result.status {
        case .idle?:
            throw action == .stop ? TalkLoopRefusal("no push-to-talk capture is open") : TalkLoopRefusal.talkOffOrPaused
        case .busy?: throw TalkLoopRefusal("a push-to-talk capture is already open")
        default: return
        }
    }

    func reconnect() async throws {
        logger.notice("reconnect requested")
        await gateway.node.reconnectNow()
        await gateway.operatorConnection.reconnectNow()
    }

    func snapshot() async -> SessionSnapshot {
        tracker.snapshot(mode: loop.kind.rawValue, sessionKey: await gateway.operatorConnection.hello?.advertisedMainSessionKey)
    }
}

/// The Gateway and the devices as the status names them.
struct DaemonStatusNames: Sendable {
    var gatewayURL: String?
    var audioSource: String
    var audioSink: String
}
