import Foundation
import SessionBridge
import TalkLogging
import TalkService
import TalkSession

/// The running Talk loop as the service plane sees it: `ControlledSession` over `TalkSession` and the Gateway
/// sockets. It lives in the executable, not in TalkSession or TalkService, because it is wiring that joins the
/// loop, SessionBridge and the service plane, which the libraries may not do to each other (TalkService imports
/// neither; TalkSession stays free of the service plane, so the loop is tested without it).
///
/// It keeps the snapshot the status shows from what it observes: the loop's events (handed in by `run`, which
/// owns the event stream) and both Gateway sockets' states.
actor DaemonSession: ServedSession {
    /// How push-to-talk reaches the loop (`TalkSession.pushToTalk`, in every mode): a closure, so the adapter's
    /// tests can stand in for it.
    typealias PushToTalkHandler = @Sendable (PushToTalkAction) async throws -> Void

    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// The loop's push-to-talk, with the answers a person must hear about (nothing to stop, Talk off) as errors.
    static func pushToTalk(_ talk: TalkSession) -> PushToTalkHandler {
        { action in
            guard let command = PushToTalkCommand(rawValue: "talk.ptt." + action.rawValue) else {
                throw Refusal(description: "unknown push-to-talk action \(action.rawValue)")
            }
            if command == .once {
                // `once` ends with the first utterance (at most 12 s): its outcome is a `pushToTalk` event, and the
                // client is answered now, not after its own read timeout.
                let state = await talk.state
                guard state != .idle, state != .paused else {
                    throw Refusal(description: "Talk is off or paused: run 'openclaw-talk talk start' or 'resume' first")
                }
                Task { _ = await talk.pushToTalk(command) }
                return
            }
            let result = await talk.pushToTalk(command)
            switch result.status {
            case .idle?:
                throw Refusal(description: action == .stop
                    ? "no push-to-talk capture is open" : "Talk is off or paused: run 'openclaw-talk talk start' or 'resume' first")
            case .busy?: throw Refusal(description: "a push-to-talk capture is already open")
            default: return
            }
        }
    }

    nonisolated let events: AsyncStream<SessionEvent>
    private let sink: AsyncStream<SessionEvent>.Continuation
    private let talk: TalkSession
    private let gateway: GatewaySession
    private let pushToTalkHandler: PushToTalkHandler
    private let logger: Logger
    private var tracker: SessionStatusTracker
    private var watchers: [Task<Void, Never>] = []

    init(talk: TalkSession, gateway: GatewaySession, gatewayURL: String?, audioSource: String, audioSink: String,
         echoCancellation: String? = nil, pushToTalk: @escaping PushToTalkHandler, logger: Logger) {
        self.talk = talk
        self.gateway = gateway
        self.pushToTalkHandler = pushToTalk
        self.logger = logger
        (events, sink) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(1024))
        tracker = SessionStatusTracker(gatewayURL: gatewayURL, audioSource: audioSource, audioSink: audioSink,
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
        await talk.setVoice(flagKeys.contains("voice") ? nil : config.text("voice"),
                            rate: flagKeys.contains("rate") ? nil : config.integer("rate"))
    }

    // MARK: - What the loop did

    /// One event of the loop (run's event reader hands each one over).
    func observe(_ event: TalkEvent) {
        tracker.observe(event)
        sink.yield(SessionEvent(kind: event.name, detail: SessionStatusTracker.fields(of: event)))
    }

    private func connection(_ role: String, _ state: ConnectionState, hello: HelloOk?) {
        sink.yield(tracker.connection(role, state, hello: hello))
    }

    // MARK: - ControlledSession

    func pause() async throws { try await talk.pause() }
    func resume() async throws { try await talk.resume() }
    func talkStart() async throws { try await talk.activate() }
    func talkStop() async throws { await talk.deactivate() }
    func say(_ text: String) async throws { try await talk.type(text) }
    func pushToTalk(_ action: PushToTalkAction) async throws { try await pushToTalkHandler(action) }

    func reconnect() async throws {
        logger.notice("reconnect requested")
        await gateway.node.reconnectNow()
        await gateway.operatorConnection.reconnectNow()
    }

    func snapshot() async -> SessionSnapshot {
        tracker.snapshot(mode: "continuous", sessionKey: await gateway.operatorConnection.hello?.advertisedMainSessionKey)
    }
}
