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
actor DaemonSession: ControlledSession {
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
    private var snap = SessionSnapshot()
    private var roles: [String: ConnectionState] = [:]
    private var connectionError: String?
    private var talkError: String?
    private var watchers: [Task<Void, Never>] = []

    init(talk: TalkSession, gateway: GatewaySession, gatewayURL: String?, audioSource: String, audioSink: String,
         echoCancellation: String? = nil, pushToTalk: @escaping PushToTalkHandler, logger: Logger) {
        self.talk = talk
        self.gateway = gateway
        self.pushToTalkHandler = pushToTalk
        self.logger = logger
        (events, sink) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(1024))
        snap.gatewayURL = gatewayURL
        snap.audioSource = audioSource
        snap.audioSink = audioSink
        snap.echoCancellation = echoCancellation
        snap.uplink = nil  // set by the first relayUplink event: without a relay only the transcript goes out
    }

    /// Follows both sockets' states until `close()`.
    func watchGateway() {
        for (role, connection) in [("node", gateway.node), ("operator", gateway.operatorConnection)] {
            watchers.append(Task {
                for await state in await connection.stateUpdates() {
                    let hello = await connection.hello
                    await self.connection(role, state, hello: hello)
                }
            })
        }
    }

    func close() {
        watchers.forEach { $0.cancel() }
        sink.finish()
    }

    // MARK: - What the loop did

    /// One event of the loop (run's event reader hands each one over).
    func observe(_ event: TalkEvent) {
        switch event.kind {
        case .stateChanged(_, let to, _):
            snap.talkActive = to != .idle
            snap.voice = SessionSnapshot.VoicePhase(rawValue: to.rawValue)
            if to == .idle { snap.voice = nil }
        case .transcriptSent(let text, _):
            snap.lastTranscript = text
            talkError = nil
        case .replyFinal(let text):
            snap.lastReply = text
        case .relayUplink(_, let uplink, let bytesPerSecond):
            // "opus 16 kHz" → "opus": the status names the encoding; the rate is in the event.
            snap.uplink = uplink.split(separator: " ").first.map(String.init)
            snap.uplinkBytesPerSecond = bytesPerSecond
        case .replyFailed(let reason):
            talkError = "reply failed: \(reason)"
        case .error(let message):
            talkError = message
        default:
            break
        }
        sink.yield(SessionEvent(kind: event.name, detail: Self.fields(of: event)))
    }

    private func connection(_ role: String, _ state: ConnectionState, hello: HelloOk?) {
        roles[role] = state
        if role == "operator", let hello {
            snap.protocolVersion = hello.protocolVersion
            snap.serverVersion = hello.serverVersion
        }
        // Both sockets make one connection for the user: connected when both are, else the one that is not.
        let states = ["operator", "node"].compactMap { roles[$0] }
        let waiting = states.first { if case .connected = $0 { false } else { true } }
        snap.nextRetryAt = nil
        connectionError = nil
        switch waiting {
        case nil where !states.isEmpty: snap.connection = .connected
        case .connecting?: snap.connection = .connecting
        case .reconnecting(_, let next, let reason)?:
            snap.connection = .reconnecting
            snap.nextRetryAt = next
            connectionError = reason.isEmpty ? nil : reason
        case .waitingForApproval(let id, let next)?:
            snap.connection = .reconnecting
            snap.nextRetryAt = next
            connectionError = "waiting for pairing approval" + (id.map { " (request \($0))" } ?? "")
        case .disconnected(let reason)?:
            snap.connection = .disconnected
            connectionError = reason
        default:
            snap.connection = .disconnected
        }
        sink.yield(SessionEvent(kind: "connection", detail: ["role": role, "state": OpenClawTalk.Run.describe(state)]))
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
        var s = snap
        s.talkMode = s.talkActive ? "continuous" : nil
        s.sessionKey = await gateway.operatorConnection.hello?.advertisedMainSessionKey
        s.error = connectionError ?? talkError
        return s
    }

    /// The event's JSON fields as text (what `events --follow` relays), without the session-relative clock.
    private static func fields(of event: TalkEvent) -> [String: String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(event.jsonLine.utf8)) as? [String: Any] else { return [:] }
        var fields: [String: String] = [:]
        for (key, value) in object where key != "event" {
            switch value {
            case let s as String: fields[key] = s
            case is NSNull: continue
            default: fields[key] = "\(value)"
            }
        }
        return fields
    }
}
