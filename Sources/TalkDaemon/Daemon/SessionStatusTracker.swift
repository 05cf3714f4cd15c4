import Foundation
import Synchronization
import TalkLogging
import SessionBridge
import TalkService
import TalkSession

/// The snapshot the status shows, kept from what a served session observes: its loop's events and both Gateway
/// sockets' states. Kept by `DaemonSession` for either loop,
/// each of which owns one inside its actor.
struct SessionStatusTracker: Sendable {
    /// A socket's state as the status and `run`'s pairing note read it.
    enum SocketState: Sendable, Equatable {
        /// The connection's own state.
        case connection(ConnectionState)
        /// The operator socket has nothing to authenticate with (never started, or its setup code's token was
        /// refused): shown as disconnected, with `PairingStatus.noOperatorCredential`.
        case noOperatorCredential

        /// The state the status shows.
        var shown: ConnectionState {
            switch self {
            case .connection(let state): state
            case .noOperatorCredential: .disconnected(reason: PairingStatus.noOperatorCredential)
            }
        }
    }

    var snap = SessionSnapshot()
    private var roles: [GatewayRole: ConnectionState] = [:]
    private var connectionError: String?
    var talkError: String?

    init(gatewayURL: String?, audioSource: String, audioSink: String, echoCancellation: String?) {
        snap.gatewayURL = gatewayURL
        snap.audioSource = audioSource
        snap.audioSink = audioSink
        snap.echoCancellation = echoCancellation
        snap.uplink = nil  // set by the first relayUplink event: without a relay only the transcript goes out
    }

    /// One event of the loop.
    mutating func observe(_ event: TalkEvent) {
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
    }

    /// One socket's new state; returns the event the status relays.
    mutating func connection(_ role: GatewayRole, _ socket: SocketState, hello: HelloOk?) -> SessionEvent {
        let state = socket.shown
        roles[role] = state
        if role == .operator, let hello {
            snap.protocolVersion = hello.protocolVersion
            snap.serverVersion = hello.serverVersion
        }
        // Both sockets make one connection for the user: connected when both are, else the one that is not.
        let states = [GatewayRole.operator, .node].compactMap { roles[$0] }
        let waitingRole = [GatewayRole.operator, .node].first { r in roles[r].map { if case .connected = $0 { false } else { true } } ?? false }
        let waiting = waitingRole.flatMap { roles[$0] }
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
            connectionError = waitingRole.map { PairingStatus.pending($0, requestId: id) }
        case .disconnected(let reason)?:
            snap.connection = .disconnected
            connectionError = reason
        default:
            snap.connection = .disconnected
        }
        return SessionEvent(kind: "connection", detail: ["role": role.rawValue, "state": OpenClawTalk.Run.describe(state)])
    }

    /// The snapshot with its talk mode (while Talk is on) and the error to show: the connection's over the loop's.
    func snapshot(mode: String, sessionKey: String?) -> SessionSnapshot {
        var s = snap
        s.talkMode = s.talkActive ? mode : nil
        s.sessionKey = sessionKey
        s.error = connectionError ?? talkError
        return s
    }

    /// Follows both sockets' states, handing each to `update`, until the returned tasks are cancelled. An operator
    /// socket that has nothing to authenticate with is `SocketState.noOperatorCredential`.
    static func watch(_ gateway: GatewaySession,
                      _ update: @escaping @Sendable (GatewayRole, SocketState, HelloOk?) async -> Void) -> [Task<Void, Never>] {
        [(GatewayRole.node, gateway.node), (.operator, gateway.operatorConnection)].map { role, connection in
            Task {
                for await state in await connection.stateUpdates() {
                    let hello = await connection.hello
                    await update(role, role == .operator ? await operatorState(state, gateway) : .connection(state), hello)
                }
            }
        }
    }

    /// The operator socket's state as the user should read it: idle or stopped for want of a credential says so.
    static func operatorState(_ state: ConnectionState, _ gateway: GatewaySession) async -> SocketState {
        switch state {
        case .idle:
            return await gateway.credentials.hasOperatorCredential ? .connection(state) : .noOperatorCredential
        case .disconnected:
            let refused = await gateway.operatorConnection.lastConnectError?.code == "AUTH_BOOTSTRAP_TOKEN_INVALID"
            return refused ? .noOperatorCredential : .connection(state)
        default:
            return .connection(state)
        }
    }

    /// `run` says on stderr (and in its log) why it cannot chat yet, each time that changes: a role's pairing request
    /// waiting for the owner ("operator pairing pending: approve <id>"), or no operator credential.
    static func announcePairing(_ gateway: GatewaySession, logger: Logger) -> [Task<Void, Never>] {
        let last = Mutex<[GatewayRole: String]>([:])
        return watch(gateway) { role, state, _ in
            let note = pairingNote(role: role, state)
            let changed = last.withLock { seen in
                defer { seen[role] = note ?? "" }
                return note != nil && seen[role] != note
            }
            guard changed, let note else { return }
            logger.warning("pairing", metadata: ["gateway.role": "\(role.rawValue)", "pairing.note": "\(note)"])
            StandardStream.write(note + "\n", to: STDERR_FILENO)
        }
    }

    /// The line `run` prints when a socket cannot serve Talk for want of pairing, or nil.
    static func pairingNote(role: GatewayRole, _ socket: SocketState) -> String? {
        switch socket {
        case .connection(.waitingForApproval(let id, _)): PairingStatus.pending(role, requestId: id)
        case .noOperatorCredential: PairingStatus.noOperatorCredential
        case .connection: nil
        }
    }

    /// The event's JSON fields as text (what `events --follow` relays), without the session-relative clock.
    static func fields(of event: TalkEvent) -> [String: String] {
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
