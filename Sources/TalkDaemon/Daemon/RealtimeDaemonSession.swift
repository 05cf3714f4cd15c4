import Foundation
import SessionBridge
import TalkLogging
import TalkService
import TalkSession

/// `run --mode realtime` as the service plane sees it: `ControlledSession` over `RealtimeTalkSession` and the
/// Gateway sockets, keeping the status from the session's events as `DaemonSession` does for the native loop.
/// The relay hears the microphone and answers in its own voice, so the native loop's typed turns and
/// push-to-talk do not apply: they are refused with the reason, and the daemon goes on.
actor RealtimeDaemonSession: ServedSession {
    static let sayRefusal = "'say' does not apply in realtime mode: the Gateway's realtime relay hears the microphone "
        + "and answers itself, with no typed turns; run with '--mode talk' to type to the assistant"
    static let pushToTalkRefusal = "'ptt' does not apply in realtime mode: the Gateway's realtime relay listens all the "
        + "time and finds the turns itself; use 'pause' and 'resume' to close and reopen the microphone"

    nonisolated let events: AsyncStream<SessionEvent>
    private let sink: AsyncStream<SessionEvent>.Continuation
    private let talk: RealtimeTalkSession
    private let gateway: GatewaySession
    private let logger: Logger
    private var tracker: SessionStatusTracker
    private var watchers: [Task<Void, Never>] = []

    init(talk: RealtimeTalkSession, gateway: GatewaySession, gatewayURL: String?, audioSource: String, audioSink: String,
         echoCancellation: String?, logger: Logger) {
        self.talk = talk
        self.gateway = gateway
        self.logger = logger
        (events, sink) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(1024))
        tracker = SessionStatusTracker(gatewayURL: gatewayURL, audioSource: audioSource, audioSink: audioSink,
                                       echoCancellation: echoCancellation)
    }

    func watchGateway() {
        watchers += SessionStatusTracker.watch(gateway) { role, state, hello in await self.connection(role, state, hello: hello) }
    }

    func close() {
        watchers.forEach { $0.cancel() }
        sink.finish()
    }

    /// The relay speaks in the Gateway's voice: nothing of the local config applies to a running session.
    func reload(_ config: ServiceConfig, flagKeys: Set<String>) {}

    /// One event of the session (run's event reader hands each one over).
    func observe(_ event: TalkEvent) {
        if case .finalTranscript(let text, _, _, _, _) = event.kind {   // the relay's words for what was said
            tracker.snap.lastTranscript = text
            tracker.talkError = nil
        }
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
    func say(_ text: String) async throws { throw DaemonSession.Refusal(description: Self.sayRefusal) }
    func pushToTalk(_ action: PushToTalkAction) async throws { throw DaemonSession.Refusal(description: Self.pushToTalkRefusal) }

    func reconnect() async throws {
        logger.notice("reconnect requested")
        await gateway.node.reconnectNow()
        await gateway.operatorConnection.reconnectNow()
    }

    func snapshot() async -> SessionSnapshot {
        tracker.snapshot(mode: "realtime", sessionKey: await gateway.operatorConnection.hello?.advertisedMainSessionKey)
    }
}
